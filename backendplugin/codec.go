package backendplugin

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// The plugin protocol's messages are mostly large packed arrays of doubles
// (a parameter shift, a Jacobian-vector product: tens of kilobytes each,
// dozens of them per feature of a lazy run). gRPC's
// default protobuf codec takes buffers from a pool whose tiers jump from
// 32 KiB to 1 MiB and clears each buffer's whole capacity on every Get, so
// every such message cleared a megabyte or more on each side. The codec
// and pool below are gRPC's, but with a tier at every power of two and
// without the clearing: every byte handed out is overwritten before it is
// read (Marshal writes exactly the message's size; gRPC copies exactly the
// received bytes), and the buffers never leave this process's two
// endpoints.

// protoCodec is gRPC's protobuf codec (same name and wire format) on
// bufferPool.
type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("marshal: %T is not a proto.Message", v)
	}
	size := proto.Size(m)
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := proto.Marshal(m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	buf := bufferPool.Get(size)
	if _, err := (proto.MarshalOptions{}).MarshalAppend((*buf)[:0], m); err != nil {
		bufferPool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, bufferPool)}, nil
}

func (protoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if mi, ok := v.(*matrixInto); ok {
		if err := unmarshalMatrix(data, mi.m, mi.dst); !errors.Is(err, errGenericMatrix) {
			return err
		}
		v = mi.m
	}
	if gr, ok := v.(*gramReply); ok {
		if err := unmarshalGram(data, gr); !errors.Is(err, errGenericMatrix) {
			return err
		}
		gr.g, v = nil, gr.r
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("unmarshal: %T is not a proto.Message", v)
	}
	switch mm := m.(type) {
	case *pb.Matrix:
		if err := unmarshalMatrix(data, mm, nil); !errors.Is(err, errGenericMatrix) {
			return err
		}
	}
	if len(data) == 1 {
		return proto.Unmarshal(data[0].ReadOnlyData(), m)
	}
	buf := data.MaterializeToBuffer(bufferPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// dirtyPool is a mem.BufferPool with a sync.Pool per power of two from
// 2^minTier to 2^maxTier bytes, handing out buffers as they were left.
type dirtyPool struct {
	tiers [maxTier - minTier + 1]sync.Pool
}

const minTier, maxTier = 8, 26 // 256 B to 64 MiB

var bufferPool mem.BufferPool = &dirtyPool{}

func tierOf(n int) int {
	if n <= 1<<minTier {
		return minTier
	}
	return bits.Len(uint(n - 1))
}

func (p *dirtyPool) Get(n int) *[]byte {
	t := tierOf(n)
	if t > maxTier {
		b := make([]byte, n)
		return &b
	}
	if b, ok := p.tiers[t-minTier].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<t)
	return &b
}

func (p *dirtyPool) Put(b *[]byte) {
	c := cap(*b)
	if c < 1<<minTier || c > 1<<maxTier || c&(c-1) != 0 {
		return
	}
	p.tiers[bits.Len(uint(c))-1-minTier].Put(b)
}

// serverCodecOptions and clientCodecOptions make both ends use protoCodec.
func serverCodecOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(protoCodec{})}
}

func clientCodecOptions() []grpc.CallOption {
	return []grpc.CallOption{grpc.ForceCodecV2(protoCodec{})}
}
