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
	models map[uint64]framework.Model
}

func newServer(b framework.Backend) *server {
	return &server{b: b, caps: b.Capabilities(), models: make(map[uint64]framework.Model)}
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

func (s *server) gradienter(id uint64) (framework.Gradienter, error) {
	m, err := s.model(id)
	if err != nil {
		return nil, err
	}
	g, ok := m.(framework.Gradienter)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "the backend's models do not implement gradients")
	}
	return g, nil
}

func (s *server) kerneler(id uint64) (framework.Kerneler, error) {
	m, err := s.model(id)
	if err != nil {
		return nil, err
	}
	k, ok := m.(framework.Kerneler)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "the backend's models do not implement kernels")
	}
	return k, nil
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
		Gradients:      s.caps.Gradients,
		Kernel:         s.caps.Kernel,
		Classification: s.caps.Classification,
		Multiclass:     s.caps.Multiclass,
		WarmStart:      s.caps.WarmStart,
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

func (s *server) NewModel(_ context.Context, req *pb.NewModelRequest) (ref *pb.ModelRef, err error) {
	defer guard("New", &err)
	m, err := s.b.New(framework.ModelSpec{
		Task:    framework.Task(req.Task),
		Inputs:  int(req.Inputs),
		Seed:    req.Seed,
		Options: req.Options,
		Classes: int(req.Classes),
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return s.add(m)
}

// add checks that m implements what the capabilities promise and keeps it.
func (s *server) add(m framework.Model) (*pb.ModelRef, error) {
	_, isG := m.(framework.Gradienter)
	_, isK := m.(framework.Kerneler)
	_, isW := m.(framework.WarmStarter)
	if s.caps.Gradients && !isG || s.caps.Kernel && !isK || s.caps.WarmStart && !isW {
		_ = framework.Release(m)
		return nil, status.Errorf(codes.Internal,
			"backend declares %v but its model type %T does not implement all of it", s.caps, m)
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.models[id] = m
	s.mu.Unlock()
	return &pb.ModelRef{ModelId: id}, nil
}

func (s *server) Fit(ctx context.Context, req *pb.FitRequest) (_ *pb.Empty, err error) {
	defer guard("Fit", &err)
	m, err := s.model(req.ModelId)
	if err != nil {
		return nil, err
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	if err := m.Fit(ctx, x, req.GetY().GetData()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.Empty{}, nil
}

func (s *server) Predict(ctx context.Context, req *pb.MatrixRequest) (_ *pb.Matrix, err error) {
	defer guard("Predict", &err)
	m, err := s.model(req.ModelId)
	if err != nil {
		return nil, err
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	out, err := m.Predict(ctx, x)
	if err != nil {
		return nil, toStatus(err)
	}
	return toPB(out), nil
}

func (s *server) NumParams(_ context.Context, req *pb.ModelRef) (_ *pb.NumParamsResponse, err error) {
	defer guard("NumParams", &err)
	g, err := s.gradienter(req.ModelId)
	if err != nil {
		return nil, err
	}
	return &pb.NumParamsResponse{NumParams: int64(g.NumParams())}, nil
}

func (s *server) Jacobian(ctx context.Context, req *pb.MatrixRequest) (_ *pb.Matrix, err error) {
	defer guard("Jacobian", &err)
	g, err := s.gradienter(req.ModelId)
	if err != nil {
		return nil, err
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	out, err := g.Jacobian(ctx, x)
	if err != nil {
		return nil, toStatus(err)
	}
	return toPB(out), nil
}

func (s *server) PredictShifted(ctx context.Context, req *pb.PredictShiftedRequest) (_ *pb.Matrix, err error) {
	defer guard("PredictShifted", &err)
	g, err := s.gradienter(req.ModelId)
	if err != nil {
		return nil, err
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	out, err := g.PredictShifted(ctx, x, req.GetDtheta().GetData())
	if err != nil {
		return nil, toStatus(err)
	}
	return toPB(out), nil
}

func (s *server) Kernel(ctx context.Context, req *pb.KernelRequest) (_ *pb.Matrix, err error) {
	defer guard("Kernel", &err)
	k, err := s.kerneler(req.ModelId)
	if err != nil {
		return nil, err
	}
	x1, err := matrixArg("x1", req.X1)
	if err != nil {
		return nil, err
	}
	var x2 mat.Matrix // stays a nil interface when x2 is absent
	if req.X2 != nil {
		d, err := matrixArg("x2", req.X2)
		if err != nil {
			return nil, err
		}
		x2 = d
	}
	out, err := k.Kernel(ctx, x1, x2)
	if err != nil {
		return nil, toStatus(err)
	}
	return toPB(out), nil
}

func (s *server) JacobianTVec(ctx context.Context, req *pb.JacobianTVecRequest) (_ *pb.Vector, err error) {
	defer guard("JacobianTVec", &err)
	k, err := s.kerneler(req.ModelId)
	if err != nil {
		return nil, err
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	out, err := k.JacobianTVec(ctx, x, req.GetA().GetData())
	if err != nil {
		return nil, toStatus(err)
	}
	return vec(out), nil
}

func (s *server) WarmStart(ctx context.Context, req *pb.WarmStartRequest) (ref *pb.ModelRef, err error) {
	defer guard("WarmStart", &err)
	m, err := s.model(req.ModelId)
	if err != nil {
		return nil, err
	}
	w, ok := m.(framework.WarmStarter)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "the backend's models do not implement warm starts")
	}
	x, err := matrixArg("x", req.X)
	if err != nil {
		return nil, err
	}
	nm, err := w.WarmStart(ctx, x, req.GetY().GetData(), int(req.Steps), req.Seed)
	if err != nil {
		return nil, toStatus(err)
	}
	return s.add(nm)
}

func (s *server) Release(_ context.Context, req *pb.ModelRef) (_ *pb.Empty, err error) {
	defer guard("Release", &err)
	s.mu.Lock()
	m, ok := s.models[req.ModelId]
	delete(s.models, req.ModelId)
	s.mu.Unlock()
	if ok {
		if err := framework.Release(m); err != nil {
			return nil, toStatus(err)
		}
	}
	return &pb.Empty{}, nil
}
