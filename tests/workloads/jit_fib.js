// A hot JS function for tests/e2e/jit_names.sh: fib computed over and over
// for about SECONDS (default 1), so V8 compiles it and nearly all of the
// CPU time is in its JIT code.
function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
const secs = Number(process.argv[2] || 1);
const until = Date.now() + secs * 1000;
let total = 0;
while (Date.now() < until)
	total += fib(22);
console.log(total);
