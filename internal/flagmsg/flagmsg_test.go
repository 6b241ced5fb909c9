package flagmsg

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// The library's errors name its settings; vi's name the flags.
func TestError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("fold 2: %w", &framework.FieldError{Field: "Config.TrainFrac", Msg: "must be in (0, 1), got 1"}), "fold 2: --train-frac must be in (0, 1), got 1"},
		{&framework.FieldError{Field: "EstimateOptions.Level", Msg: "must be in (0, 1), got 2"}, "--level must be in (0, 1), got 2"},
		{&framework.FieldError{Field: "Config.Unknown", Msg: "is bad"}, "Config.Unknown is bad"},
		{errors.New("Config.TrainFrac in plain text"), "Config.TrainFrac in plain text"},
	} {
		if got := Error(c.err); got != c.want {
			t.Errorf("Error(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestWarnings: the library's advice becomes the flags that follow it.
func TestWarnings(t *testing.T) {
	ws := []string{"x; consider the forest backend", "y; raise its epoch cap", "z"}
	Warnings(ws)
	want := []string{"x; consider --backend forest", "y; raise --epochs", "z"}
	for i := range ws {
		if ws[i] != want[i] {
			t.Errorf("warning %d: %q, want %q", i, ws[i], want[i])
		}
	}
}

// TestInputHint: a text cell in the response asks for class codes, in a
// feature for --categorical; other errors get no hint.
func TestInputHint(t *testing.T) {
	bad := &dataio.InputError{File: "f.csv", Column: "y", Err: dataio.ErrText, Msg: "not a number"}
	if h := InputHint(InResponse(bad, "y")); !strings.Contains(h, "code its classes as numbers") {
		t.Errorf("response: hint %q", h)
	}
	if h := InputHint(InResponse(bad, "other")); !strings.Contains(h, "--categorical") {
		t.Errorf("feature: hint %q", h)
	}
	if h := InputHint(errors.New("other")); h != "" {
		t.Errorf("other error: hint %q", h)
	}
}

// TestSuggestion: an undefined flag near a defined one is suggested.
func TestSuggestion(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("estimators", "", "")
	err := fs.Parse([]string{"--estimator", "lazy"})
	if got := Suggestion(fs, err); !strings.Contains(got, "--estimators") {
		t.Errorf("Suggestion: %q", got)
	}
	if got := Suggestion(fs, errors.New("other")); got != "" {
		t.Errorf("Suggestion of another error: %q", got)
	}
}
