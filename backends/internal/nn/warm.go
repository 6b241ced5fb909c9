package nn

// A warm start's learning-rate schedule (Trainer.Continue): over its
// steps, the rate rises linearly to WarmPeak times the lr option in the
// first WarmRiseDiv-th of the steps, then falls linearly toward zero.
//
// The schedule lets a warm start of few steps get as close to retraining
// as a constant rate gets in several times as many. The rise matters: the
// resumed second moments (Adam.Resumed) are
// those of the end of Fit, small next to the gradients of the reduced
// data, so the first steps are the largest; a schedule that starts at its
// peak (a linear or cosine decay from 1 to 4 times lr) does worse than the
// constant rate.
const (
	WarmPeak    = 4 // the peak rate, as a multiple of the lr option
	WarmRiseDiv = 4 // the rise takes steps/WarmRiseDiv steps
)

// WarmRate returns the factor of the lr option at step t (0 <= t < steps)
// of a warm start of steps steps: with rise = steps/WarmRiseDiv,
// WarmPeak (t+1)/rise while t < rise, then WarmPeak (steps-t)/(steps-rise),
// which is WarmPeak at t = rise and WarmPeak/(steps-rise) at the last step.
func WarmRate(t, steps int) float64 {
	rise := steps / WarmRiseDiv
	if t < rise {
		return WarmPeak * float64(t+1) / float64(rise)
	}
	return WarmPeak * float64(steps-t) / float64(steps-rise)
}
