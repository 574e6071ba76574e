// A Go program with about 50 MB of heap live at its end: 50 blocks of
// 1 MiB, each written, kept until exit.  Go's runtime reserves far more
// address space than that (PROT_NONE arenas and indexes) and maps its
// heap with mmap, never through malloc (tests/e2e/alloc_go.sh).
package main

import "os"

var keep [][]byte

func main() {
	for i := 0; i < 50; i++ {
		b := make([]byte, 1<<20)
		for j := range b {
			b[j] = byte(j)
		}
		keep = append(keep, b)
	}
	if len(keep) != 50 {
		os.Exit(1)
	}
}
