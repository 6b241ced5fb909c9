// Package pb holds the protocol buffer messages and gRPC service of the
// backend plugin protocol. It is generated from backend.proto; only package
// backendplugin uses it.
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative backend.proto
