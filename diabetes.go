package lazyvi

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/lazyvi/lazyvi/dataio"
)

// diabetesCSV is the diabetes data of Efron, Hastie, Johnstone and
// Tibshirani (2004), "Least Angle Regression", as scikit-learn bundles it.
//
//go:embed data/diabetes.csv
var diabetesCSV []byte

// DiabetesSource is the Source of the data set Diabetes returns, as error
// messages name it.
const DiabetesSource = "diabetes.csv (built-in)"

// Diabetes returns a new copy of the built-in diabetes data: 442 patients,
// 10 features (age, sex, bmi, bp, s1..s6) and the response "target", a
// measure of disease progression one year after baseline. It is what vi
// estimate, shapley and roar use without --data.
func Diabetes() (*dataio.Dataset, error) {
	d, err := dataio.ReadCSV(bytes.NewReader(diabetesCSV), DiabetesSource)
	if err != nil {
		return nil, fmt.Errorf("built-in data: %w", err)
	}
	return d, nil
}
