// A Go program of known shape for the Go symbol tests: main.main calls
// main.spin (never inlined), which burns CPU for the seconds given (default
// 1) in a loop the compiler cannot drop.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func spin(d time.Duration) uint64 {
	x := uint64(1)
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 200000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	fmt.Println(spin(time.Duration(secs * float64(time.Second))))
}
