// The Go toolchain's own reading of a binary's .gopclntab (debug/gosym), as
// the answer tests/unit/test_gosym checks record/stacks/gosym.c against.
// Prints one function a line: entry, end, line and file at the entry, name
// (tab-separated, hexadecimal addresses).
package main

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

func main() {
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var pcln []byte
	for _, s := range f.Sections {
		if strings.HasSuffix(s.Name, ".gopclntab") {
			pcln, err = s.Data()
		}
	}
	if pcln == nil || err != nil {
		fmt.Fprintln(os.Stderr, "no .gopclntab")
		os.Exit(1)
	}
	text := uint64(0)
	if s := f.Section(".text"); s != nil {
		text = s.Addr
	}
	// Go 1.18+ tables say where Go's text starts (runtime.text), which
	// is not .text when a C linker put code before it
	magic := binary.LittleEndian.Uint32(pcln)
	if (magic == 0xfffffff0 || magic == 0xfffffff1) && len(pcln) >= 32 {
		if v := binary.LittleEndian.Uint64(pcln[24:]); v != 0 {
			text = v
		}
	}
	t, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, text))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, fn := range t.Funcs {
		file, line, _ := t.PCToLine(fn.Entry)
		fmt.Printf("%x\t%x\t%d\t%s\t%s\n", fn.Entry, fn.End, line, file, fn.Name)
	}
}
