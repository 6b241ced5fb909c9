package backendplugin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lazyvi/lazyvi/internal/pb"
)

// Raw values (see "Raw values" at the Matrix message in
// internal/pb/backend.proto). Between a client and a server that agreed on
// it, the values of every Matrix and Vector travel in data_raw, a bytes
// field, instead of the packed doubles of data: protobuf-go encodes and
// decodes packed doubles one value at a time (a third of the transport's
// CPU on lazy's 5.3 MB training rows), a bytes field with one copy. Each
// end converts whole messages in one place, whatever codec gRPC runs
// (go-plugin's test harness serves with the default one): the client in
// rawSender (its requests' values into data_raw when the plugin reads
// them, every answer's back into data before it is read), the server in
// onModel (every request's into data before it is read, its answer's into
// data_raw when the model's client reads them). All the other code sees
// data as before. The bits are the same either way: a value's 8 bytes are
// its IEEE 754 bits, little-endian, as in a packed double.

// littleEndian: this host stores a float64 as its little-endian bytes, so
// that data_raw is the values' memory itself.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// toRaw moves the values of every Matrix and Vector in m into data_raw. On
// a little-endian host data_raw aliases the values (m is then marshalled
// from the same memory that data named, which must not change until the
// message is sent: as with data itself).
func toRaw(m proto.Message) {
	eachValues(m.ProtoReflect(), func(data *[]float64, raw *[]byte) error {
		if len(*data) > 0 {
			*raw, *data = rawOf(*data), nil
		}
		return nil
	})
}

// toData moves the values of every Matrix and Vector in m from data_raw
// into data: on a little-endian host as a view of data_raw's bytes when
// they lie on 8 bytes (protobuf-go's fresh copy of a bytes field does),
// else as a decoded copy. A message with values in both fields, or with a
// data_raw that is not whole values, is an error.
func toData(m proto.Message) error {
	return eachValues(m.ProtoReflect(), func(data *[]float64, raw *[]byte) error {
		if len(*raw) == 0 {
			return nil
		}
		if len(*data) > 0 {
			return errors.New("malformed values: both data and data_raw set")
		}
		if len(*raw)%8 != 0 {
			return fmt.Errorf("malformed values: data_raw of %d bytes is not whole float64s", len(*raw))
		}
		*data, *raw = floatsOf(*raw), nil
		return nil
	})
}

// rawOf is the little-endian bytes of v: v's memory on a little-endian
// host, else an encoded copy.
func rawOf(v []float64) []byte {
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
	}
	return encodeLE(v)
}

// floatsOf is the float64s whose little-endian bytes b holds (len(b) a
// multiple of 8): b's memory on a little-endian host when b starts on 8
// bytes, else a decoded copy.
func floatsOf(b []byte) []float64 {
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 {
		return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	}
	return decodeLE(b)
}

func encodeLE(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}

func decodeLE(b []byte) []float64 {
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// eachValues calls f with the data and data_raw fields of every Matrix and
// Vector in m's tree (in message fields, lists and map values), stopping
// at f's first error.
func eachValues(m protoreflect.Message, f func(data *[]float64, raw *[]byte) error) error {
	switch v := m.Interface().(type) {
	case *pb.Matrix:
		if v == nil {
			return nil
		}
		return f(&v.Data, &v.DataRaw) // no Matrix or Vector within
	case *pb.Vector:
		if v == nil {
			return nil
		}
		return f(&v.Data, &v.DataRaw)
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					err = eachValues(mv.Message(), f)
					return err == nil
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				l := v.List()
				for i := 0; i < l.Len() && err == nil; i++ {
					err = eachValues(l.Get(i).Message(), f)
				}
			}
		case fd.Message() != nil:
			err = eachValues(v.Message(), f)
		}
		return err == nil
	})
	return err
}
