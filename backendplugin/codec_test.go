package backendplugin

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// protoCodec must be gRPC's protobuf wire format: what it marshals,
// proto.Unmarshal reads, and it reads what proto.Marshal writes, whether
// the received bytes come as one buffer or split into frames, at sizes on
// both sides of the pooling threshold and of every pool tier, with reused
// (dirty) buffers in between.
func TestProtoCodec(t *testing.T) {
	var c protoCodec
	for _, n := range []int{0, 1, 100, 511, 512, 4095, 5000, 70000, 300000} {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i%97) - 0.5
		}
		m := &pb.JacobianTVecRequest{ModelId: uint64(n), X: &pb.Matrix{Rows: 1, Cols: int64(n), Handle: 7, Data: rawOf(v)}, A: vec(v)}
		out, err := c.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		wire := out.Materialize()
		out.Free()
		want, _ := proto.Marshal(m)
		if !proto.Equal(m, unmarshalStd(t, wire)) || len(wire) != len(want) {
			t.Fatalf("n %d: marshalled %d bytes, proto.Marshal %d, or they differ", n, len(wire), len(want))
		}
		// One buffer, and frames of 16 KiB (as HTTP/2 delivers them).
		for _, frame := range []int{len(want) + 1, 16 << 10} {
			var in mem.BufferSlice
			for lo := 0; lo < len(want); lo += frame {
				in = append(in, mem.SliceBuffer(want[lo:min(lo+frame, len(want))]))
			}
			got := new(pb.JacobianTVecRequest)
			if err := c.Unmarshal(in, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(m, got) {
				t.Fatalf("n %d, frames of %d: unmarshalled message differs", n, frame)
			}
		}
	}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Error("Marshal of a string: no error")
	}
}

func unmarshalStd(t *testing.T, b []byte) *pb.JacobianTVecRequest {
	t.Helper()
	m := new(pb.JacobianTVecRequest)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The pool hands out buffers of the asked length in power-of-two tiers and
// takes back only what fits a tier.
func TestDirtyPool(t *testing.T) {
	p := &dirtyPool{}
	for _, n := range []int{1, 256, 257, 1000, 1 << 20, (1 << 20) + 1, 1 << 26} {
		b := p.Get(n)
		if len(*b) != n || cap(*b) < n || cap(*b)&(cap(*b)-1) != 0 || cap(*b) >= 2*max(n, 256) {
			t.Errorf("Get(%d): len %d cap %d", n, len(*b), cap(*b))
		}
		p.Put(b)
	}
	big := p.Get(1<<26 + 1)
	if len(*big) != 1<<26+1 {
		t.Errorf("beyond the tiers: len %d", len(*big))
	}
	p.Put(big) // not a tier: dropped, no panic
	odd := make([]byte, 300)
	p.Put(&odd)
}
