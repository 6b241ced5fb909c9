package backendplugin

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/scratch"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// server serves one framework.Backend in the plugin process. Models live in
// a map by id until released; every method may run concurrently, on
// different models and on the same one (the backend's models must allow
// that, as the estimators call them concurrently in-process too).
type server struct {
	pb.UnimplementedBackendServer

	b    framework.Backend
	caps framework.Capabilities

	mu     sync.RWMutex
	nextID uint64
	models map[uint64]framework.Model

	// kept holds the request matrices sent under a handle (see the Matrix
	// message in backend.proto) until the client releases them.
	kept *keptMatrices
	// kernels keeps the memory of symmetric kernels sent as their upper
	// triangle (copied out), for the next Kernel call's
	// (jacobian.KernelInto).
	kernels *scratch.List[float64]
}

func newServer(b framework.Backend) *server {
	return &server{b: b, caps: b.Capabilities(), models: make(map[uint64]framework.Model), kept: newKeptMatrices(),
		kernels: scratch.New[float64](2 * time.Second)}
}

// guard turns a panic in the backend into an Internal error, so that one
// bad call does not take the plugin and every other model down; the stack
// goes to stderr.
func guard(op string, err *error) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "lazyvi backend plugin: panic in %s: %v\n%s", op, r, debug.Stack())
		*err = status.Errorf(codes.Internal, "panic in backend %s: %v", op, r)
	}
}

func (s *server) model(id uint64) (framework.Model, error) {
	s.mu.RLock()
	m, ok := s.models[id]
	s.mu.RUnlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no model %d (released?)", id)
	}
	return m, nil
}

// modelAs returns the model id names as an M: NotFound when there is no
// such model, Unimplemented when the backend's model type is not an M.
func modelAs[M any](s *server, id uint64) (M, error) {
	var zero M
	m, err := s.model(id)
	if err != nil {
		return zero, err
	}
	if mm, ok := m.(M); ok {
		return mm, nil
	}
	what := "this call"
	switch any((*M)(nil)).(type) {
	case *framework.Model:
		// Only a nil model is not one; calling it panics, as it did.
		return zero, nil
	case *framework.Gradienter:
		what = "gradients"
	case *framework.Kerneler:
		what = "kernels"
	case *framework.WarmStarter:
		what = "warm starts"
	case *framework.WarmStopper:
		what = "early-stopped warm starts"
	case *framework.Persister:
		what = "saving and loading"
	}
	return zero, status.Errorf(codes.Unimplemented, "the backend's models do not implement %s", what)
}

// onModel carries what every RPC on one model shares: a panic in the
// backend becomes an Internal error (guard, under op); the model id names
// is looked up as an M (modelAs); the RPC's matrix argument x, called name
// in errors, is unpacked or kept or looked up by its handle
// (InvalidArgument when malformed; name "" for an RPC without one, x is
// then ignored and f gets nil); then f calls the model and packs its
// answer.
func onModel[M any, R any](s *server, op string, id uint64, name string, x *pb.Matrix, f func(M, *mat.Dense) (R, error)) (resp R, err error) {
	defer guard(op, &err)
	m, err := modelAs[M](s, id)
	if err != nil {
		return resp, err
	}
	var xd *mat.Dense
	if name != "" {
		if xd, err = s.kept.resolve(name, x); err != nil {
			return resp, err
		}
	}
	return f(m, xd)
}

// matrixResp packs a model's matrix answer, or its error as a status.
func matrixResp(out *mat.Dense, err error) (*pb.Matrix, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return toPB(out), nil
}

func matrixArg(name string, m *pb.Matrix) (*mat.Dense, error) {
	d, err := fromPB(m)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", name, err)
	}
	return d, nil
}

func vecArg(name string, v *pb.Vector) ([]float64, error) {
	out, err := vecOf(v)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", name, err)
	}
	return out, nil
}

func single(o *pb.CallOptions) bool { return o.GetPrecision() == pb.Precision_SINGLE }

func (s *server) Describe(context.Context, *pb.DescribeRequest) (resp *pb.DescribeResponse, err error) {
	defer guard("Describe", &err)
	resp = &pb.DescribeResponse{Capabilities: capsToPB(s.caps)}
	for _, o := range s.b.Options() {
		resp.Options = append(resp.Options, &pb.OptionInfo{Name: o.Name, DefaultValue: o.Default, Usage: o.Usage})
	}
	return resp, nil
}

func (s *server) NewModel(ctx context.Context, req *pb.NewModelRequest) (ref *pb.ModelRef, err error) {
	defer guard("New", &err)
	m, err := s.b.New(ctx, framework.ModelSpec{
		Task:       framework.Task(req.Task),
		Inputs:     int(req.Inputs),
		Seed:       req.Seed,
		Options:    req.Options,
		Classes:    int(req.Classes),
		Pretrained: req.Pretrained != nil,
	})
	if err != nil {
		return nil, toStatus(err)
	}
	id, err := s.add(m)
	if err != nil {
		return nil, err
	}
	return &pb.ModelRef{ModelId: id}, nil
}

// add checks that m implements what the capabilities promise and keeps it.
func (s *server) add(m framework.Model) (uint64, error) {
	_, isG := framework.As[framework.Gradienter](m)
	_, isK := framework.As[framework.Kerneler](m)
	_, isW := framework.As[framework.WarmStarter](m)
	_, isWS := framework.As[framework.WarmStopper](m)
	_, isJ := framework.As[framework.JacobianMultiplier](m)
	_, isS := framework.As[framework.SinglePrecisioner](m)
	_, isSK := framework.As[framework.SingleKerneler](m)
	if s.caps.Gradients && !isG || s.caps.Kernel && !isK || s.caps.WarmStart && !isW || s.caps.WarmStop && !isWS || s.caps.MatrixFree && !isJ || s.caps.SinglePrecision && !isS || s.caps.SingleKernel && !isSK {
		_ = framework.Release(m)
		return 0, status.Errorf(codes.Internal,
			"backend declares %v but its model type %T does not implement all of it", s.caps, m)
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.models[id] = m
	s.mu.Unlock()
	return id, nil
}

func (s *server) Fit(ctx context.Context, req *pb.FitRequest) (*pb.Fitted, error) {
	return onModel(s, "Fit", req.ModelId, "x", req.X, func(m framework.Model, x *mat.Dense) (*pb.Fitted, error) {
		y, err := vecArg("y", req.Y)
		if err != nil {
			return nil, err
		}
		if err := m.Fit(ctx, x, y); err != nil {
			return nil, toStatus(err)
		}
		return fittedPB(req.ModelId, m), nil
	})
}

// addFitted registers a model that a warm start returned (err its error)
// and reports it as fitted.
func (s *server) addFitted(m framework.Model, err error) (*pb.Fitted, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	id, err := s.add(m)
	if err != nil {
		return nil, err
	}
	return fittedPB(id, m), nil
}

// fittedPB is what a fitted model says of itself.
func fittedPB(id uint64, m framework.Model) *pb.Fitted {
	out := &pb.Fitted{ModelId: id}
	if g, ok := m.(framework.Gradienter); ok {
		out.NumParams = int64(g.NumParams())
	}
	if r, ok := m.(framework.FitReporter); ok {
		fr := r.FitReport()
		out.Report = &pb.FitReport{Epochs: int64(fr.Epochs), StoppedBy: fr.StoppedBy, ValidRows: int64(fr.ValidRows),
			ValidLoss: fr.ValidLoss, Loaded: fr.Loaded, Architecture: fr.Architecture}
	}
	return out
}

func (s *server) Predict(ctx context.Context, req *pb.PredictRequest) (*pb.Matrix, error) {
	return onModel(s, "Predict", req.ModelId, "x", req.X, func(m framework.Model, x *mat.Dense) (*pb.Matrix, error) {
		if req.Prepared {
			if pp, ok := jacobian.PreparedOf(m, single(req.Options)); ok {
				return matrixResp(pp.PredictPrepared(ctx, x))
			}
		}
		return matrixResp(m.Predict(ctx, x))
	})
}

func (s *server) Jacobian(ctx context.Context, req *pb.JacobianRequest) (*pb.Matrix, error) {
	return onModel(s, "Jacobian", req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.Matrix, error) {
		return matrixResp(g.Jacobian(ctx, x))
	})
}

func (s *server) Kernel(ctx context.Context, req *pb.KernelRequest) (*pb.Matrix, error) {
	return onModel(s, "Kernel", req.ModelId, "x1", req.X1, func(k framework.Kerneler, x1 *mat.Dense) (*pb.Matrix, error) {
		var x2 mat.Matrix // stays a nil interface when x2 is absent
		if req.X2 != nil {
			d, err := s.kept.resolve("x2", req.X2)
			if err != nil {
				return nil, err
			}
			x2 = d
		}
		var dst []float64
		if x2 == nil && req.AllowUpper {
			n, _ := x1.Dims()
			dst = s.kernels.Get(n * n)
		}
		out, err := jacobian.KernelInto(ctx, singleKernelOf(k, single(req.Options)), x1, x2, dst)
		// Halved only when exactly symmetric: a kernel that is symmetric
		// up to rounding (a general matrix product, say) travels whole,
		// so the client gets the model's bits either way. The triangle is
		// a copy: the kernel's memory serves the next call.
		if err == nil && x2 == nil && req.AllowUpper && exactlySymmetric(out) {
			n, _ := out.Dims()
			raw := out.RawMatrix()
			resp := upperPB(raw.Data, raw.Stride, n)
			s.kernels.Put(raw.Data)
			return resp, nil
		}
		return matrixResp(out, err)
	})
}

func (s *server) JacobianTVec(ctx context.Context, req *pb.JacobianTVecRequest) (*pb.Vector, error) {
	return onModel(s, "JacobianTVec", req.ModelId, "x", req.X, func(k framework.Kerneler, x *mat.Dense) (*pb.Vector, error) {
		a, err := vecArg("a", req.A)
		if err != nil {
			return nil, err
		}
		out, err := singleKernelOf(k, single(req.Options)).JacobianTVec(ctx, x, a)
		if err != nil {
			return nil, toStatus(err)
		}
		return vec(out), nil
	})
}

// singleKernelOf is k, or with single its single-precision form when k is
// a model that has one (jacobian.KernelerOf).
func singleKernelOf(k framework.Kerneler, single bool) framework.Kerneler {
	if m, ok := k.(framework.Model); ok && single {
		if sk, ok := jacobian.KernelerOf(m, true); ok {
			return sk
		}
	}
	return k
}

// PredictShifts serves models with gradients: every shift by
// jacobian.PredictShifts (the model's own batching when it has one, else
// concurrent calls), here in the plugin process.
func (s *server) PredictShifts(ctx context.Context, req *pb.PredictShiftsRequest) (*pb.PredictShiftsResponse, error) {
	return onModel(s, "PredictShifts", req.ModelId, "", nil, func(g framework.Gradienter, _ *mat.Dense) (*pb.PredictShiftsResponse, error) {
		shifts := make([]framework.Shift, len(req.Shifts))
		for i, sh := range req.Shifts {
			var err error
			if shifts[i], err = s.shift(i, sh, single(req.Options)); err != nil {
				return nil, err
			}
		}
		preds, err := jacobian.PredictShifts(ctx, g, shifts)
		if err != nil {
			return nil, toStatus(err)
		}
		resp := &pb.PredictShiftsResponse{Preds: make([]*pb.Matrix, len(preds))}
		for i, p := range preds {
			resp.Preds[i] = toPB(p)
		}
		return resp, nil
	})
}

// shift unpacks shift i of a PredictShifts request.
func (s *server) shift(i int, sh *pb.Shift, single bool) (framework.Shift, error) {
	x, err := s.kept.resolve(fmt.Sprintf("shift %d: x", i), sh.X)
	if err != nil {
		return framework.Shift{}, err
	}
	out := framework.Shift{X: x, Single: single}
	if out.DTheta, err = vecArg(fmt.Sprintf("shift %d: dtheta", i), sh.Dtheta); err != nil {
		return framework.Shift{}, err
	}
	if sh.XTrain != nil {
		if out.XTrain, err = s.kept.resolve(fmt.Sprintf("shift %d: x_train", i), sh.XTrain); err != nil {
			return framework.Shift{}, err
		}
		if out.A, err = vecArg(fmt.Sprintf("shift %d: a", i), sh.A); err != nil {
			return framework.Shift{}, err
		}
	}
	return out, nil
}

// Gram serves models with gradients: by their own framework.GramBuilder when
// they have one, else from their Jacobian, here in the plugin process.
func (s *server) Gram(ctx context.Context, req *pb.GramRequest) (*pb.GramResponse, error) {
	return onModel(s, "Gram", req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.GramResponse, error) {
		e, err := vecArg("e", req.E)
		if err != nil {
			return nil, err
		}
		gram, b, err := jacobian.Gram(ctx, g, x, e, nil)
		if err != nil {
			return nil, toStatus(err)
		}
		raw := gram.RawSymmetric()
		return &pb.GramResponse{G: upperPB(raw.Data, raw.Stride, raw.N), B: vec(b)}, nil
	})
}

// JacobianProduct serves models with gradients: by their own
// framework.JacobianMultiplier when they have one (its single-precision
// form when the request asks for it and the model has one), else from
// their Jacobian, here in the plugin process.
func (s *server) JacobianProduct(ctx context.Context, req *pb.JacobianProductRequest) (*pb.Matrix, error) {
	op := "JacobianMul"
	if req.Transpose {
		op = "JacobianTMul"
	}
	return onModel(s, op, req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.Matrix, error) {
		v, err := matrixArg("v", req.V)
		if err != nil {
			return nil, err
		}
		jm, ok := jacobian.MultiplierOf(g, single(req.Options))
		switch {
		case ok && req.Transpose:
			return matrixResp(jm.JacobianTMul(ctx, x, v))
		case ok:
			return matrixResp(jm.JacobianMul(ctx, x, v))
		}
		return matrixResp(jacobian.Products(ctx, g, x, v, req.Transpose))
	})
}

func (s *server) WarmStart(ctx context.Context, req *pb.WarmStartRequest) (*pb.Fitted, error) {
	return onModel(s, "WarmStart", req.ModelId, "x", req.X, func(w framework.WarmStarter, x *mat.Dense) (*pb.Fitted, error) {
		y, err := vecArg("y", req.Y)
		if err != nil {
			return nil, err
		}
		return s.addFitted(w.WarmStart(ctx, x, y, int(req.Steps), req.Seed))
	})
}

func (s *server) WarmStartStopped(ctx context.Context, req *pb.WarmStartStoppedRequest) (*pb.Fitted, error) {
	return onModel(s, "WarmStartStopped", req.ModelId, "x", req.X, func(w framework.WarmStopper, x *mat.Dense) (*pb.Fitted, error) {
		y, err := vecArg("y", req.Y)
		if err != nil {
			return nil, err
		}
		return s.addFitted(w.WarmStartStopped(ctx, x, y, int(req.MaxEpochs), req.Seed))
	})
}

func (s *server) Save(ctx context.Context, req *pb.ModelRef) (*pb.ModelState, error) {
	return onModel(s, "Save", req.ModelId, "", nil, func(p framework.Persister, _ *mat.Dense) (*pb.ModelState, error) {
		state, err := p.SaveState(ctx)
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.ModelState{ModelId: req.ModelId, State: state}, nil
	})
}

func (s *server) Load(ctx context.Context, req *pb.ModelState) (*pb.Fitted, error) {
	return onModel(s, "Load", req.ModelId, "", nil, func(p framework.Persister, _ *mat.Dense) (*pb.Fitted, error) {
		if err := p.LoadState(ctx, req.State); err != nil {
			return nil, toStatus(err)
		}
		return fittedPB(req.ModelId, p), nil
	})
}

// Release frees the models and kept matrices named; the first error of a
// model's release is returned after all are freed. The served models that
// are framework.Forgetters forget the released matrices: the client keeps
// them no longer, so it is done with them, and what a model computed from
// them (a network's signals) goes with them.
func (s *server) Release(_ context.Context, req *pb.ReleaseRequest) (_ *pb.ReleaseResponse, err error) {
	defer guard("Release", &err)
	if xs := s.kept.release(req.MatrixHandles); len(xs) > 0 {
		s.mu.RLock()
		var fs []framework.Forgetter
		for _, m := range s.models {
			if f, ok := m.(framework.Forgetter); ok {
				fs = append(fs, f)
			}
		}
		s.mu.RUnlock()
		for _, f := range fs {
			f.Forget(xs...)
		}
	}
	var first error
	for _, id := range req.ModelIds {
		s.mu.Lock()
		m, ok := s.models[id]
		delete(s.models, id)
		s.mu.Unlock()
		if ok {
			if err := framework.Release(m); err != nil && first == nil {
				first = err
			}
		}
	}
	if first != nil {
		return nil, toStatus(first)
	}
	return &pb.ReleaseResponse{}, nil
}
