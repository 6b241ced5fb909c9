package backendplugin

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
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
	models map[uint64]served

	// cache holds the request matrices sent with a key (see the Matrix
	// message in backend.proto), within defaultMatrixCacheBytes.
	cache *matrixCache
}

func newServer(b framework.Backend) *server {
	return &server{b: b, caps: b.Capabilities(), models: make(map[uint64]served),
		cache: newMatrixCache(defaultMatrixCacheBytes)}
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

// served is a model the server keeps, and whether its client reads raw
// values in answers (NewModelRequest.raw_answers).
type served struct {
	m   framework.Model
	raw bool
}

func (s *server) model(id uint64) (served, error) {
	s.mu.RLock()
	m, ok := s.models[id]
	s.mu.RUnlock()
	if !ok {
		return served{}, status.Errorf(codes.NotFound, "no model %d (released?)", id)
	}
	return m, nil
}

// modelAs returns the model id names as an M, and whether its client reads
// raw values: NotFound when there is no such model, Unimplemented when the
// backend's model type is not an M.
func modelAs[M any](s *server, id uint64) (M, bool, error) {
	var zero M
	sm, err := s.model(id)
	if err != nil {
		return zero, false, err
	}
	if mm, ok := sm.m.(M); ok {
		return mm, sm.raw, nil
	}
	what := "this call"
	switch any((*M)(nil)).(type) {
	case *framework.Model:
		// Only a nil model is not one; calling it panics, as it did.
		return zero, sm.raw, nil
	case *framework.Gradienter:
		what = "gradients"
	case *framework.Kerneler:
		what = "kernels"
	case *framework.WarmStarter:
		what = "warm starts"
	case *framework.Persister:
		what = "saving and loading"
	}
	return zero, false, status.Errorf(codes.Unimplemented, "the backend's models do not implement %s", what)
}

// onModel carries what every RPC on one model shares: a panic in the
// backend becomes an Internal error (guard, under op); the raw values of
// the request req move into data (toData; InvalidArgument when malformed),
// whatever codec decoded it; the model id names is looked up as an M
// (modelAs); the RPC's matrix argument x, called name in
// errors, is unpacked (InvalidArgument when malformed; name "" for an RPC
// without one, x is then ignored and f gets nil), or stored in or looked up
// from the matrix cache when it carries a key (the cache-miss error when a
// reference's key is not held); then f calls the model and packs its
// answer, whose values go raw (toRaw) when the model's client reads them
// so.
func onModel[M any, R proto.Message](s *server, op string, req proto.Message, id uint64, name string, x *pb.Matrix, f func(M, *mat.Dense) (R, error)) (resp R, err error) {
	defer guard(op, &err)
	if err := toData(req); err != nil {
		return resp, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	m, raw, err := modelAs[M](s, id)
	if err != nil {
		return resp, err
	}
	var xd *mat.Dense
	if name != "" {
		if xd, err = s.cache.resolve(name, x); err != nil {
			return resp, err
		}
	}
	if resp, err = f(m, xd); err == nil && raw {
		toRaw(resp)
	}
	return resp, err
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

func (s *server) Capabilities(context.Context, *pb.Empty) (*pb.CapabilitiesResponse, error) {
	return &pb.CapabilitiesResponse{
		Gradients:        s.caps.Gradients,
		Kernel:           s.caps.Kernel,
		Classification:   s.caps.Classification,
		Multiclass:       s.caps.Multiclass,
		WarmStart:        s.caps.WarmStart,
		Persist:          s.caps.Persist,
		MatrixCache:      true,
		ShiftBatch:       true,
		Gram:             true,
		MatrixFree:       s.caps.MatrixFree,
		JacobianProducts: true,
		SinglePrecision:  s.caps.SinglePrecision,
		SingleKernel:     s.caps.SingleKernel,
		RawValues:        true,
	}, nil
}

func (s *server) Options(context.Context, *pb.Empty) (resp *pb.OptionsResponse, err error) {
	defer guard("Options", &err)
	resp = &pb.OptionsResponse{}
	for _, o := range s.b.Options() {
		resp.Options = append(resp.Options, &pb.OptionInfo{Name: o.Name, DefaultValue: o.Default, Usage: o.Usage})
	}
	return resp, nil
}

func (s *server) NewModel(ctx context.Context, req *pb.NewModelRequest) (ref *pb.ModelRef, err error) {
	defer guard("New", &err)
	m, err := s.b.New(ctx, framework.ModelSpec{
		Task:    framework.Task(req.Task),
		Inputs:  int(req.Inputs),
		Seed:    req.Seed,
		Options: req.Options,
		Classes: int(req.Classes),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return s.add(m, req.RawAnswers)
}

// add checks that m implements what the capabilities promise and keeps it,
// with whether its client reads raw values.
func (s *server) add(m framework.Model, raw bool) (*pb.ModelRef, error) {
	_, isG := framework.AsGradienter(m)
	_, isK := framework.AsKerneler(m)
	_, isW := framework.AsWarmStarter(m)
	_, isJ := framework.AsJacobianMultiplier(m)
	_, isS := framework.AsSinglePrecisioner(m)
	_, isSK := framework.AsSingleKerneler(m)
	if s.caps.Gradients && !isG || s.caps.Kernel && !isK || s.caps.WarmStart && !isW || s.caps.MatrixFree && !isJ || s.caps.SinglePrecision && !isS || s.caps.SingleKernel && !isSK {
		_ = framework.Release(m)
		return nil, status.Errorf(codes.Internal,
			"backend declares %v but its model type %T does not implement all of it", s.caps, m)
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.models[id] = served{m: m, raw: raw}
	s.mu.Unlock()
	return &pb.ModelRef{ModelId: id}, nil
}

func (s *server) Fit(ctx context.Context, req *pb.FitRequest) (*pb.FitResponse, error) {
	return onModel(s, "Fit", req, req.ModelId, "x", req.X, func(m framework.Model, x *mat.Dense) (*pb.FitResponse, error) {
		if err := m.Fit(ctx, x, req.GetY().GetData()); err != nil {
			return nil, toStatus(err)
		}
		return fitResponse(m), nil
	})
}

// fitResponse is what a fitted model says of its training.
func fitResponse(m framework.Model) *pb.FitResponse {
	r, ok := m.(framework.FitReporter)
	if !ok {
		return &pb.FitResponse{}
	}
	fr := r.FitReport()
	return &pb.FitResponse{Reported: true, Epochs: int64(fr.Epochs), StoppedBy: fr.StoppedBy,
		ValidRows: int64(fr.ValidRows), ValidLoss: fr.ValidLoss}
}

func (s *server) Predict(ctx context.Context, req *pb.MatrixRequest) (*pb.Matrix, error) {
	return onModel(s, "Predict", req, req.ModelId, "x", req.X, func(m framework.Model, x *mat.Dense) (*pb.Matrix, error) {
		if pp, ok := framework.AsPreparedPredictor(m); ok && req.Prepared {
			return matrixResp(pp.PredictPrepared(ctx, x))
		}
		return matrixResp(m.Predict(ctx, x))
	})
}

func (s *server) NumParams(_ context.Context, req *pb.ModelRef) (*pb.NumParamsResponse, error) {
	return onModel(s, "NumParams", req, req.ModelId, "", nil, func(g framework.Gradienter, _ *mat.Dense) (*pb.NumParamsResponse, error) {
		return &pb.NumParamsResponse{NumParams: int64(g.NumParams())}, nil
	})
}

func (s *server) Jacobian(ctx context.Context, req *pb.MatrixRequest) (*pb.Matrix, error) {
	return onModel(s, "Jacobian", req, req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.Matrix, error) {
		return matrixResp(g.Jacobian(ctx, x))
	})
}

func (s *server) PredictShifted(ctx context.Context, req *pb.PredictShiftedRequest) (*pb.Matrix, error) {
	return onModel(s, "PredictShifted", req, req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.Matrix, error) {
		return matrixResp(g.PredictShifted(ctx, x, req.GetDtheta().GetData()))
	})
}

func (s *server) Kernel(ctx context.Context, req *pb.KernelRequest) (*pb.Matrix, error) {
	return onModel(s, "Kernel", req, req.ModelId, "x1", req.X1, func(k framework.Kerneler, x1 *mat.Dense) (*pb.Matrix, error) {
		var x2 mat.Matrix // stays a nil interface when x2 is absent
		if req.X2 != nil {
			d, err := s.cache.resolve("x2", req.X2)
			if err != nil {
				return nil, err
			}
			x2 = d
		}
		out, err := singleKernelOf(k, req.Single).Kernel(ctx, x1, x2)
		// Halved only when exactly symmetric: a kernel that is symmetric
		// up to rounding (a general matrix product, say) travels whole,
		// so the client gets the model's bits either way.
		if err == nil && x2 == nil && req.AllowUpper && exactlySymmetric(out) {
			return upperPB(out), nil
		}
		return matrixResp(out, err)
	})
}

func (s *server) JacobianTVec(ctx context.Context, req *pb.JacobianTVecRequest) (*pb.Vector, error) {
	return onModel(s, "JacobianTVec", req, req.ModelId, "x", req.X, func(k framework.Kerneler, x *mat.Dense) (*pb.Vector, error) {
		out, err := singleKernelOf(k, req.Single).JacobianTVec(ctx, x, req.GetA().GetData())
		if err != nil {
			return nil, toStatus(err)
		}
		return vec(out), nil
	})
}

// singleKernelOf is k, or with single its single-precision form when k is
// a model that has one (framework.KernelerOf).
func singleKernelOf(k framework.Kerneler, single bool) framework.Kerneler {
	if m, ok := k.(framework.Model); ok && single {
		if sk, ok := framework.KernelerOf(m, true); ok {
			return sk
		}
	}
	return k
}

// PredictShifts serves models with gradients: every shift by
// framework.PredictShifts (the model's own batching when it has one, else
// concurrent calls), here in the plugin process.
func (s *server) PredictShifts(ctx context.Context, req *pb.PredictShiftsRequest) (*pb.PredictShiftsResponse, error) {
	return onModel(s, "PredictShifts", req, req.ModelId, "", nil, func(g framework.Gradienter, _ *mat.Dense) (*pb.PredictShiftsResponse, error) {
		shifts := make([]framework.Shift, len(req.Shifts))
		for i, sh := range req.Shifts {
			x, err := s.cache.resolve(fmt.Sprintf("shift %d: x", i), sh.X)
			if err != nil {
				return nil, err
			}
			shifts[i] = framework.Shift{X: x, DTheta: sh.GetDtheta().GetData(), Single: sh.Single}
			if sh.XTrain != nil {
				if shifts[i].XTrain, err = s.cache.resolve(fmt.Sprintf("shift %d: x_train", i), sh.XTrain); err != nil {
					return nil, err
				}
				shifts[i].A = sh.GetA().GetData()
			}
		}
		preds, err := framework.PredictShifts(ctx, g, shifts)
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

// Gram serves models with gradients: by their own framework.Grammer when
// they have one, else from their Jacobian, here in the plugin process.
func (s *server) Gram(ctx context.Context, req *pb.GramRequest) (*pb.GramResponse, error) {
	return onModel(s, "Gram", req, req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.GramResponse, error) {
		gram, b, err := framework.GramOf(ctx, g, x, req.GetE().GetData())
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.GramResponse{N: int64(gram.SymmetricDim()), Upper: packUpper(gram), B: vec(b)}, nil
	})
}

// JacobianMul serves models with gradients: by their own
// framework.JacobianMultiplier when they have one (its single-precision
// form when the request asks for it and the model has one), else from
// their Jacobian, here in the plugin process.
func (s *server) JacobianMul(ctx context.Context, req *pb.JacobianProductRequest) (*pb.Matrix, error) {
	return s.jacobianProduct(ctx, "JacobianMul", req, false)
}

// JacobianTMul is JacobianMul's transposed product.
func (s *server) JacobianTMul(ctx context.Context, req *pb.JacobianProductRequest) (*pb.Matrix, error) {
	return s.jacobianProduct(ctx, "JacobianTMul", req, true)
}

func (s *server) jacobianProduct(ctx context.Context, op string, req *pb.JacobianProductRequest, trans bool) (*pb.Matrix, error) {
	return onModel(s, op, req, req.ModelId, "x", req.X, func(g framework.Gradienter, x *mat.Dense) (*pb.Matrix, error) {
		v, err := matrixArg("v", req.V)
		if err != nil {
			return nil, err
		}
		jm, ok := framework.MultiplierOf(g, req.Single)
		switch {
		case ok && trans:
			return matrixResp(jm.JacobianTMul(ctx, x, v))
		case ok:
			return matrixResp(jm.JacobianMul(ctx, x, v))
		}
		return matrixResp(framework.JacobianProducts(ctx, g, x, v, trans))
	})
}

func (s *server) WarmStart(ctx context.Context, req *pb.WarmStartRequest) (*pb.ModelRef, error) {
	return onModel(s, "WarmStart", req, req.ModelId, "x", req.X, func(w framework.WarmStarter, x *mat.Dense) (*pb.ModelRef, error) {
		nm, err := w.WarmStart(ctx, x, req.GetY().GetData(), int(req.Steps), req.Seed)
		if err != nil {
			return nil, toStatus(err)
		}
		// The new model's client is the receiver's: raw answers if its
		// are (and not if the receiver was released meanwhile).
		parent, _ := s.model(req.ModelId)
		return s.add(nm, parent.raw)
	})
}

func (s *server) Save(ctx context.Context, req *pb.ModelRef) (*pb.ModelState, error) {
	return onModel(s, "Save", req, req.ModelId, "", nil, func(p framework.Persister, _ *mat.Dense) (*pb.ModelState, error) {
		state, err := p.SaveState(ctx)
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.ModelState{ModelId: req.ModelId, State: state}, nil
	})
}

func (s *server) Load(ctx context.Context, req *pb.ModelState) (*pb.FitResponse, error) {
	return onModel(s, "Load", req, req.ModelId, "", nil, func(p framework.Persister, _ *mat.Dense) (*pb.FitResponse, error) {
		if err := p.LoadState(ctx, req.State); err != nil {
			return nil, toStatus(err)
		}
		return fitResponse(p), nil
	})
}

func (s *server) Release(_ context.Context, req *pb.ModelRef) (_ *pb.Empty, err error) {
	defer guard("Release", &err)
	s.mu.Lock()
	m, ok := s.models[req.ModelId]
	delete(s.models, req.ModelId)
	s.mu.Unlock()
	if ok {
		if err := framework.Release(m.m); err != nil {
			return nil, toStatus(err)
		}
	}
	return &pb.Empty{}, nil
}
