package backendplugin

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The protocol's values are raw IEEE 754 little-endian doubles in bytes
// fields (Matrix.data, Vector.data). On a little-endian host that is the
// values' memory itself: a matrix is marshalled from its own float64s, and
// an unmarshalled bytes field (protobuf-go's fresh copy, 8-byte aligned) is
// read as float64s in place.

// littleEndian: this host stores a float64 as its little-endian bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// rawOf is the little-endian bytes of v: v's memory on a little-endian
// host (which must not change until the message is sent), else an encoded
// copy.
func rawOf(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
	}
	return encodeLE(v)
}

// floatsOf is the float64s whose little-endian bytes b holds (len(b) a
// multiple of 8): b's memory on a little-endian host when b starts on 8
// bytes, else a decoded copy.
func floatsOf(b []byte) []float64 {
	if len(b) == 0 {
		return nil
	}
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
