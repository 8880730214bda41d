package check

import (
	"fmt"
	"go/types"
	"reflect"

	"github.com/resumegen/resumegen/generator/internal/jsontype"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// ErrorIdentities refuses a test of an error that a step error replayed
// from the journal could not answer as the original did: a comparison or
// errors.Is with something other than a package-level error variable; a
// test for an interface not every error satisfies, or for a type
// parameter; a test for an error type the generated code cannot name or
// whose value JSON cannot carry (unexported or json:"-" fields, fields of
// func, channel or interface type other than error; exported fields of
// type error are journaled as errors of their own).
var ErrorIdentities = &Check{
	Name: "erroridentities",
	Doc:  "the error identities a body tests survive the journal",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, t := range w.ErrorTests {
				errorTest(p, pkg, t)
			}
		})
	},
}

func errorTest(p *Pass, pkg *model.Package, t model.ErrorTest) {
	self := pkg.Load.Types
	q := model.NameQualifier(self)
	if t.Type == nil {
		if t.Sentinel == nil {
			p.Errorf(t.Pos, "%s, %s is not a package-level error variable: its identity cannot be journaled, so a step error replayed after a resume would not match it; compare with a package-level sentinel (var ErrX = errors.New(...))", t.What, types.ExprString(t.Target))
		}
		return
	}
	typ := t.Type
	if _, ok := typ.(*types.TypeParam); ok {
		// Before the interface test: a type parameter's underlying type
		// is its constraint, an interface.
		p.Errorf(t.Pos, "%s type parameter %s cannot be replayed: test a concrete error type or a package-level sentinel", t.What, typ)
		return
	}
	if _, ok := typ.Underlying().(*types.Interface); ok {
		p.Errorf(t.Pos, "%s interface type %s cannot be replayed: a step error replayed after a resume keeps only the sentinels and concrete error types its workflow tests; test a concrete error type or a package-level sentinel instead", t.What, types.TypeString(typ, q))
		return
	}
	if err := nameable(typ, self); err != nil {
		p.Errorf(t.Pos, "%s %s cannot be replayed: %v", t.What, types.TypeString(typ, q), err)
		return
	}
	if err := errorTypeJournaled(typ, q); err != nil {
		p.Errorf(t.Pos, "%s %s cannot be replayed: a step error of this type is journaled as JSON and %v; export its state in JSON-encodable fields (an exported field of type error for the error it wraps), implement json.Marshaler and json.Unmarshaler, or test a package-level sentinel instead", t.What, types.TypeString(typ, q), err)
	}
}

// nameable reports why the generated code, at the package level of the
// workflow's package self, cannot name t.
func nameable(t types.Type, self *types.Package) error {
	named, ok := types.Unalias(jsontype.Deref(t)).(*types.Named)
	if !ok {
		return nil
	}
	obj := named.Obj()
	switch {
	case obj.Pkg() == nil:
		return nil
	case obj.Parent() != obj.Pkg().Scope():
		return fmt.Errorf("%s is declared inside a function, where the generated code cannot name it; declare it at package level", obj.Name())
	case obj.Pkg() != self && !obj.Exported():
		return fmt.Errorf("%s is unexported in package %s, so the generated code cannot name it; test an exported type or a sentinel", obj.Name(), obj.Pkg().Path())
	}
	return nil
}

// errorTypeJournaled returns nil when a value of the error type t
// survives the journal: it marshals itself, or its state is exported
// JSON-encodable fields and fields of type error (which the runtime
// journals as errors of their own). Unexported fields and fields tagged
// json:"-" would be lost, so they are refused.
func errorTypeJournaled(t types.Type, q types.Qualifier) error {
	base := jsontype.Deref(t)
	if jsontype.RoundTrips(base, "MarshalJSON", "UnmarshalJSON") || jsontype.RoundTrips(base, "MarshalText", "UnmarshalText") {
		return nil
	}
	s, ok := base.Underlying().(*types.Struct)
	if !ok {
		return journaled(base, q)
	}
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		switch {
		case !f.Exported():
			return fmt.Errorf("its field %s is unexported, which JSON cannot carry", f.Name())
		case model.IsError(f.Type()):
			continue
		case reflect.StructTag(s.Tag(i)).Get("json") == "-":
			return fmt.Errorf("its field %s is tagged json:\"-\", so it would come back empty", f.Name())
		}
		if err := journaled(f.Type(), q); err != nil {
			return fmt.Errorf("its field %s cannot be journaled: %w", f.Name(), err)
		}
	}
	return nil
}
