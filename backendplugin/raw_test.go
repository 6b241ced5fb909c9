package backendplugin

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// valueCount counts the Matrix and Vector messages in m with values in
// data and in data_raw.
func valueCount(m proto.Message) (data, raw int) {
	_ = eachValues(m.ProtoReflect(), func(d *[]float64, r *[]byte) error {
		if len(*d) > 0 {
			data++
		}
		if len(*r) > 0 {
			raw++
		}
		return nil
	})
	return data, raw
}

// rawLog is a server interceptor counting the messages with values in
// data and in data_raw, in the requests as they arrived and in the answers
// as they leave.
type rawLog struct {
	mu                                 sync.Mutex
	reqData, reqRaw, respData, respRaw int
}

func (l *rawLog) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	d, r := valueCount(req.(proto.Message))
	resp, err := h(ctx, req)
	var rd, rr int
	if m, ok := resp.(proto.Message); ok && err == nil {
		rd, rr = valueCount(m)
	}
	l.mu.Lock()
	l.reqData, l.reqRaw, l.respData, l.respRaw = l.reqData+d, l.reqRaw+r, l.respData+rd, l.respRaw+rr
	l.mu.Unlock()
	return resp, err
}

// warmLinear is the linear fake with warm starts (a copy of the model).
type warmLinear struct{ *linear }

func (b warmLinear) Capabilities() framework.Capabilities {
	c := b.linear.Capabilities()
	c.WarmStart = true
	return c
}

func (b warmLinear) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return warmModel{m.(*linModel)}, nil
}

type warmModel struct{ *linModel }

func (w warmModel) WarmStart(_ context.Context, _ mat.Matrix, _ []float64, _ int, _ int64) (framework.Model, error) {
	c := &linModel{b: w.b, p: w.p}
	c.w = w.weights().RawVector().Data
	return warmModel{c}, nil
}

// rawCalls makes the calls that carry values both ways on a fitted model of
// r (p inputs) and returns their answers; the same rng seed gives the same
// calls.
func rawCalls(t *testing.T, r framework.Backend, seed uint64) []*mat.Dense {
	t.Helper()
	ctx := context.Background()
	const p = 30
	rng := rand.New(rand.NewPCG(seed, 1))
	m, _, _ := fitted(t, r, rng, 200, p)
	g := m.(framework.Gradienter)
	k := m.(framework.Kerneler)
	x := randDense(rng, 150, p) // 4500 values: keyed
	var out []*mat.Dense
	add := func(d *mat.Dense, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	add(m.Predict(ctx, x))
	add(m.Predict(ctx, x)) // by reference
	add(g.Jacobian(ctx, x))
	add(g.PredictShifted(ctx, x, randVec(rng, p)))
	add(k.Kernel(ctx, x, nil))
	v, err := k.JacobianTVec(ctx, x, randVec(rng, 150))
	add(mat.NewDense(1, p, v), err)
	preds, err := framework.PredictShifts(ctx, g, []framework.Shift{
		{X: x, DTheta: randVec(rng, p)}, {X: x.Slice(0, 10, 0, p), DTheta: randVec(rng, p)}})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, preds...)
	w, err := m.(framework.WarmStarter).WarmStart(ctx, x, randVec(rng, 150), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	add(w.Predict(ctx, x))
	return out
}

// oldRawServer is a server from before raw values: it does not advertise
// them, and it does not know raw_answers (it answers with data).
type oldRawServer struct{ *server }

func (s oldRawServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.RawValues = false
	}
	return resp, err
}

func (s oldRawServer) NewModel(ctx context.Context, req *pb.NewModelRequest) (*pb.ModelRef, error) {
	req.RawAnswers = false
	return s.server.NewModel(ctx, req)
}

// TestRawValues: between this client and this server every value crosses
// raw, both ways, and the answers are the same bits as with a server that
// does not read raw values (which then gets and sends none) and in process.
func TestRawValues(t *testing.T) {
	want := rawCalls(t, warmLinear{newLinear()}, 3)
	for _, old := range []bool{false, true} {
		var srv pb.BackendServer = newServer(warmLinear{newLinear()})
		if old {
			srv = oldRawServer{srv.(*server)}
		}
		log := &rawLog{}
		r := inProcessServer(t, "linear", srv, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		got := rawCalls(t, r, 3)
		for i := range want {
			if !mat.Equal(got[i], want[i]) {
				t.Errorf("old server %v: answer %d differs from the in-process one", old, i)
			}
		}
		switch {
		case !old && (log.reqData != 0 || log.reqRaw == 0 || log.respData != 0 || log.respRaw == 0):
			t.Errorf("new server: requests %d packed, %d raw; answers %d packed, %d raw; want all raw",
				log.reqData, log.reqRaw, log.respData, log.respRaw)
		case old && (log.reqRaw != 0 || log.respRaw != 0 || log.reqData == 0 || log.respData == 0):
			t.Errorf("old server: requests %d packed, %d raw; answers %d packed, %d raw; want none raw",
				log.reqData, log.reqRaw, log.respData, log.respRaw)
		}
	}
}

// TestRawValuesKnownKeySize: the client accounts for a matrix it believes
// cached by its shape, also after its values went raw.
func TestRawValuesKnownKeySize(t *testing.T) {
	r := inProcess(t, "linear", newLinear())
	rng := rand.New(rand.NewPCG(5, 6))
	m, _, _ := fitted(t, r, rng, 200, 30)
	used := r.c.known.lru.used
	if _, err := m.Predict(context.Background(), randDense(rng, 150, 30)); err != nil {
		t.Fatal(err)
	}
	if got, want := r.c.known.lru.used-used, int64(8*150*30+keyHeader+16+entryOverhead); got != want {
		t.Fatalf("the known keys grew by %d bytes, want %d", got, want)
	}
}

// TestRawValuesOldClient: a client from before raw values (no raw_answers;
// here gRPC's own codec and no conversion) gets its answers in data, also
// for a warm-started model; one that sets raw_answers gets the same bits
// in data_raw, and so does a model warm-started from its model.
func TestRawValuesOldClient(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	s := newServerWith(newServer(warmLinear{newLinear()}), nil)
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	cc, err := grpc.NewClient("passthrough:///old", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := pb.NewBackendClient(cc)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := randDense(rng, 50, 5), randVec(rng, 50)
	predict := func(raw, warm bool) *pb.Matrix {
		t.Helper()
		ref, err := c.NewModel(ctx, &pb.NewModelRequest{Inputs: 5, RawAnswers: raw})
		if err == nil {
			_, err = c.Fit(ctx, &pb.FitRequest{ModelId: ref.ModelId, X: toPB(x), Y: vec(y)})
		}
		if err == nil && warm {
			ref, err = c.WarmStart(ctx, &pb.WarmStartRequest{ModelId: ref.ModelId, X: toPB(x), Y: vec(y), Steps: 1})
		}
		var out *pb.Matrix
		if err == nil {
			out, err = c.Predict(ctx, &pb.MatrixRequest{ModelId: ref.ModelId, X: toPB(x)})
		}
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, warm := range []bool{false, true} {
		plain, raw := predict(false, warm), predict(true, warm)
		if len(plain.Data) != 50 || len(plain.DataRaw) != 0 {
			t.Fatalf("warm %v: without raw_answers: %d values in data, %d bytes in data_raw", warm, len(plain.Data), len(plain.DataRaw))
		}
		if len(raw.Data) != 0 || len(raw.DataRaw) != 8*50 {
			t.Fatalf("warm %v: with raw_answers: %d values in data, %d bytes in data_raw", warm, len(raw.Data), len(raw.DataRaw))
		}
		for i, v := range plain.Data {
			if math.Float64bits(v) != binary.LittleEndian.Uint64(raw.DataRaw[8*i:]) {
				t.Fatalf("warm %v: value %d: %v in data, other bits in data_raw", warm, i, v)
			}
		}
	}
}

// TestRawValuesMalformed: values in both fields, or raw bytes that are not
// whole float64s, are refused (InvalidArgument from the server).
func TestRawValuesMalformed(t *testing.T) {
	s := newServer(newLinear())
	ctx := context.Background()
	ref, err := s.NewModel(ctx, &pb.NewModelRequest{Inputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*pb.Matrix{
		{Rows: 1, Cols: 2, Data: []float64{1, 2}, DataRaw: make([]byte, 16)},
		{Rows: 1, Cols: 2, DataRaw: make([]byte, 15)},
	} {
		_, err := s.Predict(ctx, &pb.MatrixRequest{ModelId: ref.ModelId, X: x})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("data %d values, data_raw %d bytes: got %v, want InvalidArgument", len(x.Data), len(x.DataRaw), err)
		}
	}
	if err := toData(&pb.Vector{Data: []float64{1}, DataRaw: make([]byte, 8)}); err == nil {
		t.Error("a vector with both fields: no error")
	}
}

// TestRawBytes: the raw bytes of values are their IEEE 754 bits,
// little-endian, for every kind of value, read in place or decoded (an
// odd-aligned buffer); the decoded message owns its values.
func TestRawBytes(t *testing.T) {
	v := []float64{0, math.Copysign(0, -1), 1, -2.5, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), math.SmallestNonzeroFloat64, math.MaxFloat64, 1.0 / 3}
	raw := rawOf(v)
	if enc := encodeLE(v); string(enc) != string(raw) {
		t.Fatal("rawOf and encodeLE differ")
	}
	same := func(what string, got []float64) {
		t.Helper()
		if len(got) != len(v) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(v))
		}
		for i := range v {
			if math.Float64bits(got[i]) != math.Float64bits(v[i]) {
				t.Fatalf("%s: value %d: bits %x, want %x", what, i, math.Float64bits(got[i]), math.Float64bits(v[i]))
			}
		}
	}
	same("floatsOf", floatsOf(raw))
	same("decodeLE", decodeLE(raw))
	odd := make([]byte, len(raw)+1)
	copy(odd[1:], raw)
	same("floatsOf, odd-aligned", floatsOf(odd[1:]))

	// Through protobuf-go: the decoded values are a copy of the buffer's.
	buf, err := proto.Marshal(&pb.Vector{DataRaw: raw})
	if err != nil {
		t.Fatal(err)
	}
	var got pb.Vector
	if err := proto.Unmarshal(buf, &got); err != nil {
		t.Fatal(err)
	}
	if err := toData(&got); err != nil {
		t.Fatal(err)
	}
	clear(buf)
	same("unmarshalled, the buffer cleared after", got.Data)
	if len(got.DataRaw) != 0 {
		t.Fatal("data_raw left set")
	}
	if littleEndian && unsafe.SliceData(floatsOf(raw)) != &v[0] {
		t.Error("floatsOf copied values it could read in place")
	}
}
