package inferflags_test

import (
	"flag"
	"fmt"
	"log"

	"github.com/lazyvi/lazyvi/inferflags"
)

// A command of one's own takes vi estimate's inference flags: here
// --repeats 1 asks for one split, which is split inference.
func Example() {
	fs := flag.NewFlagSet("mytool", flag.ContinueOnError)
	var f inferflags.Flags
	f.Register(fs)
	trainFrac := fs.Float64("train-frac", 0.5, "share of rows in the train split")
	if err := fs.Parse([]string{"--repeats", "1", "--adjust", "holm"}); err != nil {
		log.Fatal(err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	if err := f.Parse(); err != nil {
		log.Fatal(err)
	}
	if err := f.Defaults(set, inferflags.Setting{TrainFrac: *trainFrac}); err != nil {
		log.Fatal(err)
	}
	opt, err := f.Options(set, 0.95)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(opt.Inference, opt.Ensemble, opt.Adjust, f.CrossFit, f.Repeats)
	// Output: split false holm 0 1
}
