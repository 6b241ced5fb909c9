package backendplugin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// phases is a backend whose model predicts, for each row of x, where the
// row starts within its 64-byte line: what a BLAS kernel that aligns its
// loads sees of the layout.
type phases struct{}

func (phases) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (phases) Options() []framework.OptionInfo      { return nil }
func (phases) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return phasesModel{}, nil
}

type phasesModel struct{}

func (phasesModel) Fit(context.Context, mat.Matrix, []float64) error { return nil }

func (phasesModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	raw := x.(*mat.Dense).RawMatrix()
	out := mat.NewDense(raw.Rows, 1, nil)
	for i := 0; i < raw.Rows; i++ {
		out.Set(i, 0, float64(phaseOf(&raw.Data[i*raw.Stride])))
	}
	return out, nil
}

// TestRowLayoutCrossesTheTransport: behind the plugin a model sees every
// row of its input at the same offset within a 64-byte line as the caller's,
// for views of every phase and stride, small (sent whole) and large (sent
// under a handle, then as a reference); the same values in another layout
// are another matrix to the handles.
func TestRowLayoutCrossesTheTransport(t *testing.T) {
	ctx := context.Background()
	r := inProcess(t, "phases", phases{})
	remoteM, err := r.New(ctx, framework.ModelSpec{Inputs: 1})
	if err != nil {
		t.Fatal(err)
	}
	local := phasesModel{}
	check := func(what string, x *mat.Dense) {
		t.Helper()
		want, _ := local.Predict(ctx, x)
		for round := 0; round < 2; round++ { // the second time a reference when kept
			got, err := remoteM.Predict(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < x.RawMatrix().Rows; i++ {
				if got.At(i, 0) != want.At(i, 0) {
					t.Fatalf("%s, call %d: the plugin's model saw row %d at phase %v, the caller's is at %v",
						what, round+1, i, got.At(i, 0), want.At(i, 0))
				}
			}
		}
	}
	for _, rows := range []int{9, 700} { // 700 x 7: above minKeptElems
		for extra := 0; extra < 9; extra++ {
			base := mat.NewDense(rows+1, 7+extra+1, nil)
			for j0 := 0; j0 <= extra; j0++ {
				x := base.Slice(1, rows+1, j0, j0+7).(*mat.Dense)
				check(fmt.Sprintf("%d rows, stride %d, column %d", rows, 7+extra+1, j0), x)
			}
		}
	}
	// The same values at every phase in turn, contiguous.
	buf := make([]float64, 700*7+lineFloats)
	for off := 0; off < lineFloats; off++ {
		check(fmt.Sprintf("contiguous at offset %d", off), mat.NewDense(700, 7, buf[off:off+700*7]))
	}
}

// TestRowLayoutWire: a matrix without a layout (an answer) unpacks in
// place; one with a layout its data has in place too;
// otherwise as a copy laid out so; a layout out of range is refused.
func TestRowLayoutWire(t *testing.T) {
	x := mat.NewDense(3, 5, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	view := x.Slice(1, 3, 1, 4).(*mat.Dense)
	m := requestPB(view)
	if m.Layout == nil || m.Layout.Skew != 2 || m.Layout.Phase != (phaseOf(&x.RawMatrix().Data[0])+6)%lineFloats {
		t.Fatalf("layout of a 2 x 3 view at element 6 of a 5-column matrix: %v", m.Layout)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got pb.Matrix
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	d, err := fromPB(&got)
	if err != nil {
		t.Fatal(err)
	}
	if raw := d.RawMatrix(); !mat.Equal(d, view) || raw.Stride%lineFloats != 5%lineFloats || phaseOf(&raw.Data[0]) != m.Layout.Phase {
		t.Fatalf("unpacked %v stride %d phase %d, want %v stride 5 mod 8, phase %d",
			mat.Formatted(d), raw.Stride, phaseOf(&raw.Data[0]), mat.Formatted(view), m.Layout.Phase)
	}

	got.Layout = nil
	inPlace := func(d *mat.Dense) bool { return unsafe.Pointer(&d.RawMatrix().Data[0]) == unsafe.Pointer(&got.Data[0]) }
	if d, err := fromPB(&got); err != nil || !inPlace(d) {
		t.Fatalf("without a layout: %v, or the data was copied", err)
	}
	got.Layout = &pb.RowLayout{Phase: phaseOf((*float64)(unsafe.Pointer(&got.Data[0])))}
	if d, err := fromPB(&got); err != nil || !inPlace(d) {
		t.Fatalf("with the data's own layout: %v, or the data was copied", err)
	}
	got.Layout = &pb.RowLayout{Phase: 8}
	if _, err := fromPB(&got); err == nil || !strings.Contains(err.Error(), "layout") {
		t.Fatalf("phase 8: want a malformed-layout error, got %v", err)
	}
	if requestPB(mat.NewVecDense(2, []float64{1, 2})).Layout != nil {
		t.Fatal("a matrix without raw storage has no layout to send")
	}
}
