// Package backendv2 is the Go code generated from backend.proto, version 2
// of the backend plugin protocol: its messages and gRPC service. Package
// backendplugin speaks it; a program in Go has no need of it otherwise.
//
// Version returns the protocol's version, read from the proto package's name.
package backendv2

//go:generate protoc -I ../../../ --go_out=../../../ --go_opt=paths=source_relative --go-grpc_out=../../../ --go-grpc_opt=paths=source_relative lazyvi/backend/v2/backend.proto
