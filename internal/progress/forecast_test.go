package progress

import (
	"strings"
	"testing"
	"time"
)

// TestForecast: the forecast comes once, after the first repetition's
// training and a twentieth of its reductions (at least four), as the
// training once per repetition (a share of it where several trained side
// by side) plus the reductions at their rate; only for a long run, and
// with --repeats 1's share where there are several.
func TestForecast(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 3 repetitions of 100 reductions; training 20 s a repetition; 5
	// reductions in 10 s: 3*20 s + 300/5*10 s = 660 s = 11 min.
	f := &Forecast{repeats: 3, models: 1, start: t0}
	if msg := f.observe(0, 300, t0.Add(20*time.Second)); msg != "" {
		t.Fatalf("forecast at the start of the reductions: %q", msg)
	}
	if msg := f.observe(4, 300, t0.Add(28*time.Second)); msg != "" {
		t.Fatalf("forecast after 4 of 100 reductions (want 5): %q", msg)
	}
	msg := f.observe(5, 300, t0.Add(30*time.Second))
	for _, want := range []string{"about 11 min", "1 min training", "--repeats 1 would take about 3 min 40 s", "9% / 20%"} {
		if !strings.Contains(msg, want) {
			t.Errorf("forecast %q lacks %q", msg, want)
		}
	}
	if again := f.observe(6, 300, t0.Add(32*time.Second)); again != "" {
		t.Errorf("second forecast: %q", again)
	}

	// The three repetitions trained side by side in 60 s before the first
	// reduction; the first 5 reductions take 30 s (beside the training's
	// end), the next 5 10 s: 90 s + 295*2 s = 680 s, the training once.
	tog := &Forecast{repeats: 3, together: 3, models: 1, start: t0}
	tog.observe(0, 300, t0.Add(60*time.Second))
	if msg := tog.observe(5, 300, t0.Add(90*time.Second)); msg != "" {
		t.Fatalf("forecast from the reductions beside the training: %q", msg)
	}
	if msg := tog.observe(9, 300, t0.Add(98*time.Second)); msg != "" {
		t.Fatalf("forecast after 4 reductions past the mark (want 5): %q", msg)
	}
	msg = tog.observe(10, 300, t0.Add(100*time.Second))
	for _, want := range []string{"about 11 min", "1 min training", "--repeats 1 would take about 3 min 50 s"} {
		if !strings.Contains(msg, want) {
			t.Errorf("forecast of repetitions trained together %q lacks %q", msg, want)
		}
	}

	// A short run says nothing; one repetition names no cheaper option.
	short := &Forecast{repeats: 3, models: 1, start: t0}
	short.observe(0, 30, t0.Add(time.Second))
	if msg := short.observe(4, 30, t0.Add(2*time.Second)); msg != "" {
		t.Errorf("forecast of a short run: %q", msg)
	}
	one := &Forecast{repeats: 1, models: 1, start: t0}
	one.observe(0, 100, t0.Add(time.Minute))
	msg = one.observe(5, 100, t0.Add(2*time.Minute))
	if !strings.Contains(msg, "about 21 min") || strings.Contains(msg, "--repeats 1") {
		t.Errorf("forecast of one repetition: %q", msg)
	}
	// --check 2 on 3 folds: 6 of each repetition's 100 reductions train a
	// model each, at a third of the repetition's training (30 s): 3*30 s +
	// 282/5*10 s + 18*10 s = 834 s.
	chk := &Forecast{repeats: 3, models: 3, checkJobs: 6, start: t0}
	chk.observe(0, 300, t0.Add(30*time.Second))
	msg = chk.observe(5, 300, t0.Add(40*time.Second))
	for _, want := range []string{"about 14 min", "1 min 30 s training the full models, 3 min retraining for --check, the rest"} {
		if !strings.Contains(msg, want) {
			t.Errorf("forecast with a check %q lacks %q", msg, want)
		}
	}
	for d, want := range map[time.Duration]string{
		73*time.Minute + 10*time.Second: "1 h 13 min",
		27*time.Minute + 20*time.Second: "27 min",
		220 * time.Second:               "3 min 40 s",
		54 * time.Second:                "50 s",
	} {
		if got := roundForecast(d); got != want {
			t.Errorf("roundForecast(%v) = %q, want %q", d, got, want)
		}
	}
}
