package backendplugin

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// A Matrix read by protoCodec from its frames unpacks (fromPB) to the same
// bits as the same bytes read by proto.Unmarshal, whatever the frames'
// size: upper triangles (returned whole), general matrices, layouts,
// handles, repeated fields (the last wins), and malformed messages, which
// fail the same way.
func TestUnmarshalMatrix(t *testing.T) {
	sym := func(n int) *pb.Matrix {
		return symPB(n, func(i, j int) float64 { return math.Sin(float64(7*i+j)) * 1e3 })
	}
	gen := func(r, c int) *pb.Matrix {
		v := make([]float64, r*c)
		for i := range v {
			v[i] = float64(i%31) - 0.25
		}
		return &pb.Matrix{Rows: int64(r), Cols: int64(c), Data: rawOf(v)}
	}
	withLayout := gen(5, 3)
	withLayout.Layout = &pb.RowLayout{Phase: 3, Skew: 5}
	withHandle := gen(2, 2)
	withHandle.Handle = 9
	cases := map[string][]byte{}
	for name, m := range map[string]*pb.Matrix{
		"sym 1": sym(1), "sym 2": sym(2), "sym 150": sym(150), "general": gen(300, 77),
		"layout": withLayout, "handle": withHandle, "empty": {Rows: 0, Cols: 3},
		"upper empty": {Upper: true}, "short upper": {Rows: 3, Cols: 3, Upper: true, Data: rawOf([]float64{1, 2})},
		"odd bytes": {Rows: 1, Cols: 1, Data: []byte{1, 2, 3}}, "upper not square": {Rows: 3, Cols: 2, Upper: true, Data: make([]byte, 48)},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = b
	}
	// Repeated fields: the upper flag before the data, a second data field.
	b, _ := proto.Marshal(sym(4))
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	cases["data twice"] = protowire.AppendBytes(b, rawOf([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))
	b = protowire.AppendTag(nil, 4, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	m4, _ := proto.Marshal(sym(4))
	cases["upper first"] = append(b, m4...)
	b = protowire.AppendTag(append([]byte(nil), m4...), 99, protowire.VarintType)
	cases["unknown field"] = protowire.AppendVarint(b, 5)
	cases["truncated"] = m4[:len(m4)-5]

	var c protoCodec
	for name, wire := range cases {
		std := new(pb.Matrix)
		stdErr := proto.Unmarshal(wire, std)
		var want []float64
		var wantR, wantC int
		var fromErr error
		if stdErr == nil {
			d, err := fromPB(std)
			if fromErr = err; err == nil {
				wantR, wantC = d.Dims()
				if wantR > 0 {
					want = d.RawMatrix().Data
				}
			}
		}
		for _, frame := range []int{1, 7, 64, 1000, len(wire) + 1} {
			// into: none (a plain Matrix reply), a destination too small,
			// and one that holds the values, full of NaNs.
			for _, into := range []int{-1, 1, 300 * 300} {
				checkUnmarshalMatrix(t, c, name, wire, frame, into, std, stdErr, fromErr, want, wantR, wantC)
			}
		}
	}
}

// checkUnmarshalMatrix decodes wire in frames of frame bytes, into a
// destination of into values (-1: none), and checks the result against
// proto.Unmarshal's std (error stdErr) unpacked by fromPB (error fromErr,
// values want, wantR x wantC).
func checkUnmarshalMatrix(t *testing.T, c protoCodec, name string, wire []byte, frame, into int, std *pb.Matrix, stdErr, fromErr error, want []float64, wantR, wantC int) {
	t.Helper()
	var in mem.BufferSlice
	for lo := 0; lo < len(wire); lo += frame {
		in = append(in, mem.SliceBuffer(wire[lo:min(lo+frame, len(wire))]))
	}
	got := new(pb.Matrix)
	var dst []float64
	var v any = got
	if into >= 0 {
		dst = make([]float64, into)
		for i := range dst {
			dst[i] = math.NaN()
		}
		v = &matrixInto{m: got, dst: dst}
	}
	err := c.Unmarshal(in, v)
	if (err == nil) != (stdErr == nil) {
		t.Fatalf("%s, frames of %d: error %v, proto.Unmarshal's %v", name, frame, err, stdErr)
	}
	if err != nil {
		return
	}
	if std.Upper && std.Rows > 0 && fromErr == nil && got.Upper && name != "unknown field" {
		t.Fatalf("%s, frames of %d: the triangle was not unpacked as it was read", name, frame)
	}
	if got.Handle != std.Handle || !proto.Equal(got.Layout, std.Layout) {
		t.Fatalf("%s, frames of %d: handle or layout differs", name, frame)
	}
	d, err := fromPB(got)
	if (err == nil) != (fromErr == nil) {
		t.Fatalf("%s, frames of %d: fromPB error %v, want %v", name, frame, err, fromErr)
	}
	if err != nil {
		return
	}
	if r, cc := d.Dims(); r != wantR || cc != wantC {
		t.Fatalf("%s, frames of %d: %d x %d, want %d x %d", name, frame, r, cc, wantR, wantC)
	}
	if wantR == 0 {
		return
	}
	for i, v := range d.RawMatrix().Data[:len(want)] {
		if math.Float64bits(v) != math.Float64bits(want[i]) {
			t.Fatalf("%s, frames of %d, into %d: value %d is %v, want %v", name, frame, into, i, v, want[i])
		}
	}
	fits := wantR*wantC <= into && got.Layout == nil && name != "unknown field"
	if into <= 0 {
		return
	}
	if aliased := &d.RawMatrix().Data[0] == &dst[0]; aliased != fits {
		t.Fatalf("%s, frames of %d: in the destination of %d values %v, want %v", name, frame, into, aliased, fits)
	}
}

// A GramResponse read by protoCodec from its frames gives what
// proto.Unmarshal's does through symFromPB and vecOf, to the bit, whatever
// the frames' size: G's triangle read into its place in a square, b, and
// malformed or unusual messages (no b, G not a triangle, a short
// triangle, G twice, an unknown field, truncated), which fail the same way
// or go to the generic unmarshal.
func TestUnmarshalGram(t *testing.T) {
	sym := func(n int) *pb.Matrix {
		return symPB(n, func(i, j int) float64 { return math.Cos(float64(3*i+j)) * 1e2 })
	}
	b := func(n int) *pb.Vector {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i) - 0.5
		}
		return vec(v)
	}
	cases := map[string][]byte{}
	for name, r := range map[string]*pb.GramResponse{
		"n 1": {G: sym(1), B: b(1)}, "n 2": {G: sym(2), B: b(2)}, "n 120": {G: sym(120), B: b(120)},
		"no b": {G: sym(5)}, "no g": {B: b(3)}, "general g": {G: &pb.Matrix{Rows: 2, Cols: 2, Data: rawOf([]float64{1, 2, 3, 4})}, B: b(2)},
		"short triangle": {G: &pb.Matrix{Rows: 3, Cols: 3, Upper: true, Data: rawOf([]float64{1, 2})}, B: b(3)},
	} {
		w, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = w
	}
	one, _ := proto.Marshal(&pb.GramResponse{G: sym(4), B: b(4)})
	g4, _ := proto.Marshal(&pb.GramResponse{G: sym(4)})
	cases["g twice"] = append(append([]byte(nil), one...), g4...)
	cases["unknown field"] = protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), one...), 9, protowire.VarintType), 3)
	cases["truncated"] = one[:len(one)-3]

	var c protoCodec
	for name, wire := range cases {
		std := new(pb.GramResponse)
		stdErr := proto.Unmarshal(wire, std)
		for _, frame := range []int{1, 5, 64, len(wire) + 1} {
			var in mem.BufferSlice
			for lo := 0; lo < len(wire); lo += frame {
				in = append(in, mem.SliceBuffer(wire[lo:min(lo+frame, len(wire))]))
			}
			reply := &gramReply{r: new(pb.GramResponse)}
			err := c.Unmarshal(in, reply)
			if (err == nil) != (stdErr == nil) {
				t.Fatalf("%s, frames of %d: error %v, proto.Unmarshal's %v", name, frame, err, stdErr)
			}
			if err != nil {
				continue
			}
			if strings.HasPrefix(name, "n ") && reply.g == nil {
				t.Fatalf("%s, frames of %d: G's triangle was not read into its square", name, frame)
			}
			wantG, wantErr := symFromPB(std.G)
			g := reply.g
			var gErr error
			if g == nil {
				g, gErr = symFromPB(reply.r.G)
			}
			if (gErr == nil) != (wantErr == nil) {
				t.Fatalf("%s, frames of %d: G's error %v, want %v", name, frame, gErr, wantErr)
			}
			if gErr == nil {
				n := wantG.SymmetricDim()
				if g.SymmetricDim() != n {
					t.Fatalf("%s, frames of %d: G is %d x %d, want %d x %d", name, frame, g.SymmetricDim(), g.SymmetricDim(), n, n)
				}
				for i := 0; i < n; i++ {
					for j := i; j < n; j++ {
						if math.Float64bits(g.At(i, j)) != math.Float64bits(wantG.At(i, j)) {
							t.Fatalf("%s, frames of %d: G(%d, %d) is %v, want %v", name, frame, i, j, g.At(i, j), wantG.At(i, j))
						}
					}
				}
			}
			gotB, bErr := vecOf(reply.r.B)
			wantB, wantBErr := vecOf(std.B)
			if (bErr == nil) != (wantBErr == nil) || len(gotB) != len(wantB) {
				t.Fatalf("%s, frames of %d: b %v (error %v), want %v (%v)", name, frame, gotB, bErr, wantB, wantBErr)
			}
			for i := range wantB {
				if math.Float64bits(gotB[i]) != math.Float64bits(wantB[i]) {
					t.Fatalf("%s, frames of %d: b[%d] is %v, want %v", name, frame, i, gotB[i], wantB[i])
				}
			}
		}
	}
}

// symPB is the upper triangle of the symmetric n x n matrix whose entry
// (i, j), i <= j, is f(i, j), as a server sends it.
func symPB(n int, f func(i, j int) float64) *pb.Matrix {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a[i*n+j] = f(i, j)
			a[j*n+i] = a[i*n+j]
		}
	}
	return upperPB(a, n, n)
}
