// Command funclen enforces AGENTS.md's rule that no production function is
// longer than a screen: it lists every function or method declared in a
// non-test, non-generated Go file under the given directories whose
// declaration spans more than -max lines (from `func` to its closing brace),
// longest first, and exits 1 if there is any. With -top N it also prints the
// N longest functions, to see how close the code is to the limit.
//
//	go run ./hack/funclen -max 80 ./cmd ./server ./helmvalues ./capistatus ./certs
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type function struct {
	pos   string
	name  string
	lines int
}

func main() {
	maxLines := flag.Int("max", 80, "the longest a function may be, in lines")
	top := flag.Int("top", 0, "also print the N longest functions")
	flag.Parse()
	var all []function
	for _, root := range flag.Args() {
		found, err := functions(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
		all = append(all, found...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].lines > all[j].lines })
	for i := 0; i < *top && i < len(all); i++ {
		fmt.Printf("%4d %s %s\n", all[i].lines, all[i].pos, all[i].name)
	}
	var over []function
	for _, f := range all {
		if f.lines > *maxLines {
			over = append(over, f)
		}
	}
	if len(over) == 0 {
		return
	}
	fmt.Fprintf(os.Stderr, "funclen: %d functions are longer than %d lines; split them:\n", len(over), *maxLines)
	for _, f := range over {
		fmt.Fprintf(os.Stderr, "%4d %s %s\n", f.lines, f.pos, f.name)
	}
	os.Exit(1)
}

// functions lists the function declarations of the production Go files
// below root: not tests, not generated code.
func functions(root string) ([]function, error) {
	var out []function
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(file) {
			return nil
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			out = append(out, function{pos: fmt.Sprintf("%s:%d", path, start.Line), name: name(fd), lines: end.Line - start.Line + 1})
		}
		return nil
	})
	return out, err
}

func name(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if ix, ok := t.(*ast.IndexListExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
