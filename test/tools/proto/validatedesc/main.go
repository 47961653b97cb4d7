// Command validatedesc writes buf/validate/validate.proto, with the files it
// imports, as a binary FileDescriptorSet on stdout (dependencies first).
//
// proto/ imports buf/validate/validate.proto for its request rules, and the
// Buf Schema Registry that would serve the source is not a dependency of the
// build: the descriptor is taken instead from the Go package generated from
// it, the one protovalidate-go checks with, and given to protoc as
// --descriptor_set_in (hack/generate.sh).
package main

import (
	"fmt"
	"os"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(validate.File_buf_validate_validate_proto)
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err == nil {
		_, err = os.Stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "validatedesc:", err)
		os.Exit(1)
	}
}
