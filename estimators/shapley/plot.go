package shapley

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"
)

// Plot draws the report as a PNG: one horizontal bar per feature and
// estimator (features top to bottom in file order, estimators in run order
// and colour), with a whisker for the confidence interval, a zero line, a
// value axis and a legend. It needs no font files: text is drawn with a
// built-in 3x5 pixel font, scaled.
func Plot(w io.Writer, rep *Report) error {
	var ests []string
	byEst := map[string][]Result{}
	for _, r := range rep.Results {
		if _, ok := byEst[r.Estimator]; !ok {
			ests = append(ests, r.Estimator)
		}
		byEst[r.Estimator] = append(byEst[r.Estimator], r)
	}
	if len(ests) == 0 {
		return fmt.Errorf("shapley: nothing to plot")
	}
	feats := byEst[ests[0]]
	lo, hi := 0.0, 0.0
	for _, r := range rep.Results {
		for _, v := range []float64{r.VI, r.CILow, r.CIHigh} {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	ticks := niceTicks(lo, hi, 6)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])

	const (
		scale  = 2  // font scale
		bar    = 6  // bar thickness
		gap    = 6  // between features
		top    = 60 // title and legend
		bottom = 40 // axis labels
		right  = 30
		plotW  = 640
	)
	nameW := 0
	for _, r := range feats {
		nameW = max(nameW, len(r.Feature))
	}
	left := 20 + textWidth(strings.Repeat("m", max(nameW, 4)), scale)
	rowH := len(ests)*bar + gap
	width := left + plotW + right
	height := top + len(feats)*rowH + bottom
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fill(img, img.Bounds(), color.RGBA{255, 255, 255, 255})
	x := func(v float64) int { return left + int(math.Round((v-lo)/(hi-lo)*plotW)) }

	black := color.RGBA{0, 0, 0, 255}
	grey := color.RGBA{220, 220, 220, 255}
	palette := []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}}
	title := fmt.Sprintf("shapley values of %s, %d%% intervals", rep.Measure, int(math.Round(rep.Level*100)))
	drawText(img, 10, 8, title, scale, black)
	lx := 10
	for e, name := range ests {
		c := palette[e%len(palette)]
		fill(img, image.Rect(lx, 34, lx+14, 34+10), c)
		drawText(img, lx+20, 34, name, scale, black)
		lx += 20 + textWidth(name, scale) + 24
	}
	y0, y1 := top, top+len(feats)*rowH
	for _, t := range ticks {
		xt := x(t)
		fill(img, image.Rect(xt, y0, xt+1, y1), grey)
		fill(img, image.Rect(xt, y1, xt+1, y1+5), black)
		s := tickLabel(t)
		drawText(img, xt-textWidth(s, scale)/2, y1+10, s, scale, black)
	}
	fill(img, image.Rect(left, y1, left+plotW+1, y1+1), black)
	zx := x(0)
	fill(img, image.Rect(zx, y0, zx+1, y1), black)
	for j, r := range feats {
		ry := top + j*rowH + gap/2
		drawText(img, left-10-textWidth(r.Feature, scale), ry+len(ests)*bar/2-5, r.Feature, scale, black)
		for e, name := range ests {
			res := byEst[name][j]
			c := palette[e%len(palette)]
			by := ry + e*bar
			a, b := x(0), x(res.VI)
			if a > b {
				a, b = b, a
			}
			fill(img, image.Rect(a, by, b+1, by+bar-1), c)
			if !math.IsNaN(res.CILow) && !math.IsNaN(res.CIHigh) {
				l, h := x(res.CILow), x(res.CIHigh)
				mid := by + bar/2 - 1
				fill(img, image.Rect(l, mid, h+1, mid+1), black)
				fill(img, image.Rect(l, by, l+1, by+bar-1), black)
				fill(img, image.Rect(h, by, h+1, by+bar-1), black)
			}
		}
	}
	return png.Encode(w, img)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for t := math.Floor(lo/step) * step; t <= hi+step*1e-9; t += step {
		out = append(out, math.Round(t/step)*step)
	}
	if out[len(out)-1] < hi {
		out = append(out, out[len(out)-1]+step)
	}
	return out
}

func tickLabel(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// The 3x5 font: each glyph is 5 rows of 3 bits, most significant bit left.
var glyphs = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 3, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 2, 2},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7},
	'a': {2, 5, 7, 5, 5}, 'b': {6, 5, 6, 5, 6}, 'c': {3, 4, 4, 4, 3}, 'd': {6, 5, 5, 5, 6},
	'e': {7, 4, 6, 4, 7}, 'f': {7, 4, 6, 4, 4}, 'g': {3, 4, 5, 5, 3}, 'h': {5, 5, 7, 5, 5},
	'i': {7, 2, 2, 2, 7}, 'j': {1, 1, 1, 5, 2}, 'k': {5, 5, 6, 5, 5}, 'l': {4, 4, 4, 4, 7},
	'm': {5, 7, 7, 5, 5}, 'n': {6, 5, 5, 5, 5}, 'o': {2, 5, 5, 5, 2}, 'p': {6, 5, 6, 4, 4},
	'q': {2, 5, 5, 6, 3}, 'r': {6, 5, 6, 5, 5}, 's': {3, 4, 2, 1, 6}, 't': {7, 2, 2, 2, 2},
	'u': {5, 5, 5, 5, 7}, 'v': {5, 5, 5, 5, 2}, 'w': {5, 5, 7, 7, 5}, 'x': {5, 5, 2, 5, 5},
	'y': {5, 5, 2, 2, 2}, 'z': {7, 1, 2, 4, 7},
	'.': {0, 0, 0, 0, 2}, ',': {0, 0, 0, 2, 4}, '-': {0, 0, 7, 0, 0}, '+': {0, 2, 7, 2, 0},
	'_': {0, 0, 0, 0, 7}, ':': {0, 2, 0, 2, 0}, '(': {1, 2, 2, 2, 1}, ')': {4, 2, 2, 2, 4},
	'%': {5, 1, 2, 4, 5}, '=': {0, 7, 0, 7, 0}, '/': {1, 1, 2, 4, 4}, '?': {7, 1, 2, 0, 2},
	' ': {0, 0, 0, 0, 0},
}

func textWidth(s string, scale int) int { return len([]rune(s)) * 4 * scale }

func drawText(img *image.RGBA, x, y int, s string, scale int, c color.RGBA) {
	for _, r := range strings.ToLower(s) {
		g, ok := glyphs[r]
		if !ok {
			g = glyphs['?']
		}
		for row := range 5 {
			for col := range 3 {
				if g[row]&(4>>col) != 0 {
					fill(img, image.Rect(x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale), c)
				}
			}
		}
		x += 4 * scale
	}
}
