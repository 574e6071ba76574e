/* Rust demangling, written from the public descriptions of the two
 * manglings: the legacy one (an Itanium-like _ZN path whose elements carry
 * $LT$-style escapes and end in a 17h<hash> element) and v0 (RFC 2603).
 * The output is the form rustc-demangle prints with {:#} and perf shows:
 * no hash, no crate disambiguators.
 *
 * v0 is printed while it is parsed, one pass, as a small recursive
 * descent.  Names come from files the traced program chose, so everything
 * is bounded: nesting depth, the work backrefs can cause (a backref may
 * point at a node full of backrefs), output length, punycode length.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/demangle_rust.h"

#define OUT_MAX 4096	   /* longer names are not worth showing whole */
#define DEPTH_MAX 128	   /* nesting of paths and types */
#define STEPS_MAX 100000   /* nodes visited, backrefs included */
#define PUNY_MAX 256	   /* code points of one identifier */

struct out {
	char buf[OUT_MAX];
	size_t len;
	int err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->err || !n)
		return;
	if (o->len + n >= sizeof(o->buf)) {
		o->err = 1;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_u64(struct out *o, uint64_t v)
{
	char b[24];

	put(o, b, (size_t)snprintf(b, sizeof(b), "%llu", (unsigned long long)v));
}

/* A Unicode scalar value as UTF-8; 0 if it is not one. */
static int put_utf8(struct out *o, uint32_t c)
{
	char b[4];

	if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (c < 0x80) {
		b[0] = (char)c;
		put(o, b, 1);
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		put(o, b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		put(o, b, 3);
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		put(o, b, 4);
	}
	return 1;
}

/* A copy of name without a trailing ".llvm.<hex or @>" (LLVM's suffix for
 * a function it renamed when importing it across units). */
static size_t without_llvm_suffix(const char *name)
{
	const char *l = strstr(name, ".llvm.");
	size_t n = strlen(name);

	if (!l)
		return n;
	for (const char *c = l + 6; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      (*c >= 'A' && *c <= 'F') || *c == '@'))
			return n;
	return (size_t)(l - name);
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static char *finish(struct out *o, const char *suffix, size_t slen)
{
	char *r;

	put(o, suffix, slen);
	if (o->err || !(r = malloc(o->len + 1)))
		return NULL;
	memcpy(r, o->buf, o->len);
	r[o->len] = 0;
	return r;
}

/* ---- legacy ----------------------------------------------------------- */

/* One path element with its escapes undone. */
static void legacy_element(struct out *o, const char *e, size_t n)
{
	static const struct { const char *code, *text; } esc[] = {
		{ "SP", "@" }, { "BP", "*" }, { "RF", "&" }, { "LT", "<" },
		{ "GT", ">" }, { "LP", "(" }, { "RP", ")" }, { "C", "," },
	};
	size_t i = 0;

	/* an element that would start with '$' gets a '_' before it */
	if (n >= 2 && e[0] == '_' && e[1] == '$')
		i = 1;
	while (i < n) {
		if (e[i] == '.') {
			int two = i + 1 < n && e[i + 1] == '.';

			puts_(o, two ? "::" : ".");
			i += two ? 2 : 1;
			continue;
		}
		if (e[i] == '$') {
			const char *end = memchr(e + i + 1, '$', n - i - 1);
			size_t clen = end ? (size_t)(end - e - i - 1) : 0;
			const char *code = e + i + 1;
			int done = 0;

			for (size_t k = 0; end && k < sizeof(esc) / sizeof(esc[0]); k++)
				if (strlen(esc[k].code) == clen &&
				    !memcmp(esc[k].code, code, clen)) {
					puts_(o, esc[k].text);
					done = 1;
				}
			if (end && !done && clen >= 2 && clen <= 7 && code[0] == 'u') {
				uint32_t c = 0;
				size_t k;

				for (k = 1; k < clen && is_hex(code[k]); k++)
					c = c * 16 + (uint32_t)(code[k] <= '9' ? code[k] - '0' :
								code[k] - 'a' + 10);
				/* control characters are not shown escaped */
				done = k == clen && c >= 0x20 && c != 0x7f &&
				       put_utf8(o, c);
			}
			if (!done) { /* not an escape: the rest as it is */
				put(o, e + i, n - i);
				return;
			}
			i += clen + 2;
			continue;
		}
		put(o, e + i, 1);
		i++;
	}
}

static int is_legacy_hash(const char *e, size_t n)
{
	if (n != 17 || e[0] != 'h')
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!is_hex(e[i]))
			return 0;
	return 1;
}

static char *legacy(const char *name)
{
	size_t n = without_llvm_suffix(name), nel = 0;
	const char *p = name + 3, *end = name + n, *last = NULL;
	struct out *o = calloc(1, sizeof(*o));
	size_t last_len = 0;
	char *r = NULL;

	if (!o)
		return NULL;
	/* the elements: <decimal length><bytes>, up to 'E' */
	while (p < end && *p != 'E') {
		size_t len = 0;

		if (*p < '1' || *p > '9')
			goto out;
		while (p < end && *p >= '0' && *p <= '9' && len < OUT_MAX)
			len = len * 10 + (size_t)(*p++ - '0');
		if (len > (size_t)(end - p))
			goto out;
		for (size_t i = 0; i < len; i++) {
			char c = p[i];

			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.'))
				goto out;
		}
		/* an element is printed once the next is seen: the last is
		 * the hash */
		if (last) {
			if (nel++)
				puts_(o, "::");
			legacy_element(o, last, last_len);
		}
		last = p;
		last_len = len;
		p += len;
	}
	/* Rust's legacy names always end in the hash: without one, this is
	 * a C++ name, left to the C++ demangler. */
	if (p >= end || !last || !nel || !is_legacy_hash(last, last_len))
		goto out;
	p++;
	/* after the 'E', only a suffix like ".cold" (kept, as rustc-demangle
	 * does) */
	if (p < end && *p != '.')
		goto out;
	r = finish(o, p, (size_t)(end - p));
out:
	free(o);
	return r;
}

/* ---- v0 --------------------------------------------------------------- */

struct v0 {
	const char *s; /* after "_R": backrefs count from here */
	size_t n, pos;
	struct out *o;
	int quiet;	 /* > 0: parsing only (impl paths, instantiating crate) */
	int err;
	unsigned depth;
	unsigned long steps;
	uint64_t bound; /* lifetimes bound by the binders around */
};

struct ident {
	const char *ascii, *puny; /* puny NULL: a plain identifier */
	size_t ascii_len, puny_len;
};

static void emit(struct v0 *p, const char *s, size_t n)
{
	if (!p->quiet)
		put(p->o, s, n);
}

static void emits(struct v0 *p, const char *s)
{
	emit(p, s, strlen(s));
}

static int peek(const struct v0 *p)
{
	return p->pos < p->n ? (unsigned char)p->s[p->pos] : 0;
}

static int next(struct v0 *p)
{
	if (p->pos >= p->n) {
		p->err = 1;
		return 0;
	}
	return (unsigned char)p->s[p->pos++];
}

static int eat(struct v0 *p, int c)
{
	if (peek(p) != c)
		return 0;
	p->pos++;
	return 1;
}

/* <base-62-number>: "_" is 0, digits then "_" are their value + 1. */
static uint64_t base62(struct v0 *p)
{
	uint64_t x = 0;
	int c;

	if (eat(p, '_'))
		return 0;
	while (!p->err && (c = next(p)) != '_') {
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'z' ? c - 'a' + 10 :
			c >= 'A' && c <= 'Z' ? c - 'A' + 36 : -1;

		if (d < 0 || x > (UINT64_MAX - 61) / 62) {
			p->err = 1;
			return 0;
		}
		x = x * 62 + (uint64_t)d;
	}
	if (p->err || x == UINT64_MAX)
		return p->err = 1, 0;
	return x + 1;
}

static uint64_t opt_base62(struct v0 *p, int tag)
{
	uint64_t v;

	if (!eat(p, tag))
		return 0;
	v = base62(p);
	if (v == UINT64_MAX)
		return p->err = 1, 0;
	return v + 1;
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
static void ident(struct v0 *p, struct ident *id)
{
	int puny = eat(p, 'u');
	size_t len = 0;
	const char *b;

	memset(id, 0, sizeof(*id));
	if (peek(p) < '0' || peek(p) > '9')
		return (void)(p->err = 1);
	if (!eat(p, '0'))
		while (peek(p) >= '0' && peek(p) <= '9') {
			len = len * 10 + (size_t)(next(p) - '0');
			if (len > p->n)
				return (void)(p->err = 1);
		}
	eat(p, '_');
	if (len > p->n - p->pos)
		return (void)(p->err = 1);
	b = p->s + p->pos;
	p->pos += len;
	if (!puny) {
		id->ascii = b;
		id->ascii_len = len;
		return;
	}
	/* punycode with '_' for '-': basic characters before the last '_' */
	id->puny = b;
	id->puny_len = len;
	for (size_t i = len; i > 0; i--)
		if (b[i - 1] == '_') {
			id->ascii = b;
			id->ascii_len = i - 1;
			id->puny = b + i;
			id->puny_len = len - i;
			break;
		}
}

static int puny_digit(char c)
{
	return c >= 'a' && c <= 'z' ? c - 'a' : c >= '0' && c <= '9' ? c - '0' + 26 : -1;
}

static uint32_t puny_adapt(uint32_t delta, uint32_t points, int first)
{
	uint32_t k = 0;

	delta = first ? delta / 700 : delta / 2;
	delta += delta / points;
	while (delta > 35 * 26 / 2) {
		delta /= 35;
		k += 36;
	}
	return k + 36 * delta / (delta + 38);
}

/* RFC 3492's decoder, into code points; 0 when malformed or too long. */
static size_t puny_decode(const struct ident *id, uint32_t *cp)
{
	uint32_t n = 128, i = 0, bias = 72;
	size_t len = 0, pos = 0;

	if (id->ascii_len > PUNY_MAX)
		return 0;
	for (size_t k = 0; k < id->ascii_len; k++)
		cp[len++] = (unsigned char)id->ascii[k];
	while (pos < id->puny_len) {
		uint32_t oldi = i, w = 1;

		for (uint32_t k = 36;; k += 36) {
			int d = pos < id->puny_len ? puny_digit(id->puny[pos++]) : -1;
			uint32_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;

			if (d < 0 || (uint32_t)d > (UINT32_MAX - i) / w)
				return 0;
			i += (uint32_t)d * w;
			if ((uint32_t)d < t)
				break;
			if (w > UINT32_MAX / (36 - t))
				return 0;
			w *= 36 - t;
		}
		if (len >= PUNY_MAX)
			return 0;
		bias = puny_adapt(i - oldi, (uint32_t)len + 1, oldi == 0);
		if (i / (len + 1) > 0x10ffff - n)
			return 0;
		n += i / (uint32_t)(len + 1);
		i %= (uint32_t)(len + 1);
		memmove(cp + i + 1, cp + i, (len - i) * sizeof(*cp));
		cp[i++] = n;
		len++;
	}
	return len;
}

static void emit_ident(struct v0 *p, const struct ident *id)
{
	uint32_t cp[PUNY_MAX];
	size_t n;

	if (p->quiet)
		return;
	if (!id->puny) {
		emit(p, id->ascii, id->ascii_len);
		return;
	}
	n = puny_decode(id, cp);
	for (size_t i = 0; i < n; i++)
		if (!put_utf8(p->o, cp[i]))
			n = 0;
	if (!n && (id->ascii_len || id->puny_len)) {
		/* what rustc-demangle shows for punycode it cannot decode */
		emits(p, "punycode{");
		emit(p, id->ascii, id->ascii_len);
		if (id->ascii_len)
			emits(p, "-");
		emit(p, id->puny, id->puny_len);
		emits(p, "}");
	}
}

static int enter(struct v0 *p)
{
	if (p->err || ++p->depth > DEPTH_MAX || ++p->steps > STEPS_MAX)
		return p->err = 1, 0;
	return 1;
}

typedef void (*node_fn)(struct v0 *p, int arg);

/* "B" <base-62-number>: the node at that offset, printed again; it must
 * lie before this backref, so following them always ends.  Parsing only,
 * there is nothing to print: not followed. */
static void backref(struct v0 *p, node_fn f, int arg)
{
	size_t at = p->pos - 1, save;
	uint64_t to = base62(p);

	if (p->err || to >= at)
		return (void)(p->err = 1);
	if (p->quiet)
		return;
	save = p->pos;
	p->pos = (size_t)to;
	f(p, arg);
	p->pos = save;
}

static void path(struct v0 *p, int in_value);
static void type(struct v0 *p, int unused);
static void konst(struct v0 *p, int unused);

static void lifetime(struct v0 *p, uint64_t lt)
{
	char b[24];

	if (lt == 0) {
		emits(p, "'_");
		return;
	}
	if (lt > p->bound)
		return (void)(p->err = 1);
	if (p->bound - lt < 26) {
		b[0] = '\'';
		b[1] = (char)('a' + (p->bound - lt));
		emit(p, b, 2);
	} else {
		emits(p, "'_");
		if (!p->quiet)
			put_u64(p->o, p->bound - lt);
	}
}

/* [<binder>]: "for<'a, 'b> " before what it binds; returns the count */
static uint64_t binder(struct v0 *p)
{
	uint64_t n = opt_base62(p, 'G');

	if (n > 64)
		return p->err = 1, 0;
	if (!n)
		return 0;
	emits(p, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			emits(p, ", ");
		p->bound++;
		lifetime(p, 1);
	}
	emits(p, "> ");
	return n;
}

static void generic_args(struct v0 *p)
{
	for (int i = 0; !p->err && !eat(p, 'E'); i++) {
		if (i)
			emits(p, ", ");
		if (eat(p, 'L'))
			lifetime(p, base62(p));
		else if (eat(p, 'K'))
			konst(p, 0);
		else
			type(p, 0);
	}
}

static void path(struct v0 *p, int in_value)
{
	struct ident id;
	uint64_t dis;
	int c, ns;

	if (!enter(p))
		return;
	switch ((c = next(p))) {
	case 'C': /* crate root */
		opt_base62(p, 's');
		ident(p, &id);
		emit_ident(p, &id);
		break;
	case 'N': /* nested: namespace, parent path, identifier */
		ns = next(p);
		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			p->err = 1;
			break;
		}
		path(p, in_value);
		dis = opt_base62(p, 's');
		ident(p, &id);
		if (ns >= 'A' && ns <= 'Z') {
			char b[2] = { (char)ns, 0 };

			emits(p, "::{");
			emits(p, ns == 'C' ? "closure" : ns == 'S' ? "shim" : b);
			if (id.ascii_len || id.puny_len) {
				emits(p, ":");
				emit_ident(p, &id);
			}
			emits(p, "#");
			if (!p->quiet)
				put_u64(p->o, dis);
			emits(p, "}");
		} else if (id.ascii_len || id.puny_len) {
			emits(p, "::");
			emit_ident(p, &id);
		}
		break;
	case 'M': /* inherent impl: <Type> */
	case 'X': /* trait impl: <Type as Trait> */
		opt_base62(p, 's');
		p->quiet++;
		path(p, 0); /* the impl's own path: not shown */
		p->quiet--;
		/* fall through */
	case 'Y': /* trait definition: <Type as Trait> */
		emits(p, "<");
		type(p, 0);
		if (c != 'M') {
			emits(p, " as ");
			path(p, 0);
		}
		emits(p, ">");
		break;
	case 'I': /* generic arguments */
		path(p, in_value);
		emits(p, in_value ? "::<" : "<");
		generic_args(p);
		emits(p, ">");
		break;
	case 'B':
		backref(p, path, in_value);
		break;
	default:
		p->err = 1;
	}
	p->depth--;
}

static const char *basic_type(int c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	case 'p': return "_";
	}
	return NULL;
}

/* A trait of a dyn type: its path, and "<Assoc = T>" bindings that go
 * inside the path's own generic arguments when it has some. */
static int dyn_trait_path(struct v0 *p)
{
	size_t save;
	int open = 0;

	if (eat(p, 'B')) {
		size_t at = p->pos - 1;
		uint64_t to = base62(p);

		if (p->err || to >= at || !enter(p))
			return p->err = 1, 0;
		if (!p->quiet) {
			save = p->pos;
			p->pos = (size_t)to;
			open = dyn_trait_path(p);
			p->pos = save;
		}
		p->depth--;
		return open;
	}
	if (eat(p, 'I')) {
		path(p, 0);
		emits(p, "<");
		generic_args(p);
		return 1;
	}
	path(p, 0);
	return 0;
}

static void dyn_trait(struct v0 *p)
{
	int open = dyn_trait_path(p);
	struct ident id;

	while (!p->err && eat(p, 'p')) {
		emits(p, open ? ", " : "<");
		open = 1;
		ident(p, &id);
		emit_ident(p, &id);
		emits(p, " = ");
		type(p, 0);
	}
	if (open)
		emits(p, ">");
}

static void fn_sig(struct v0 *p)
{
	struct ident id;

	if (eat(p, 'U'))
		emits(p, "unsafe ");
	if (eat(p, 'K')) {
		emits(p, "extern \"");
		if (eat(p, 'C')) {
			emits(p, "C");
		} else {
			ident(p, &id);
			/* '-' is mangled as '_' ("system_unwind") */
			for (size_t i = 0; i < id.ascii_len && !p->err; i++)
				emit(p, id.ascii[i] == '_' ? "-" : id.ascii + i, 1);
		}
		emits(p, "\" ");
	}
	emits(p, "fn(");
	generic_args(p); /* types only, the grammar is the same */
	emits(p, ")");
	if (!eat(p, 'u')) {
		emits(p, " -> ");
		type(p, 0);
	}
}

static void type(struct v0 *p, int unused)
{
	const char *basic;
	uint64_t n;
	int c;

	(void)unused;
	if (!enter(p))
		return;
	c = next(p);
	if ((basic = basic_type(c))) {
		emits(p, basic);
		p->depth--;
		return;
	}
	switch (c) {
	case 'R':
	case 'Q':
		emits(p, "&");
		if (eat(p, 'L')) {
			uint64_t lt = base62(p);

			if (lt) {
				lifetime(p, lt);
				emits(p, " ");
			}
		}
		if (c == 'Q')
			emits(p, "mut ");
		type(p, 0);
		break;
	case 'P':
	case 'O':
		emits(p, c == 'P' ? "*const " : "*mut ");
		type(p, 0);
		break;
	case 'A':
	case 'S':
		emits(p, "[");
		type(p, 0);
		if (c == 'A') {
			emits(p, "; ");
			konst(p, 0);
		}
		emits(p, "]");
		break;
	case 'T':
		emits(p, "(");
		n = 0;
		while (!p->err && !eat(p, 'E')) {
			if (n++)
				emits(p, ", ");
			type(p, 0);
		}
		emits(p, n == 1 ? ",)" : ")");
		break;
	case 'F':
		n = binder(p);
		fn_sig(p);
		p->bound -= n;
		break;
	case 'D':
		/* "dyn for<'a> Trait": the binder is the traits' */
		emits(p, "dyn ");
		n = binder(p);
		for (int i = 0; !p->err && !eat(p, 'E'); i++) {
			if (i)
				emits(p, " + ");
			dyn_trait(p);
		}
		p->bound -= n;
		if (!eat(p, 'L')) {
			p->err = 1;
			break;
		}
		if ((n = base62(p))) {
			emits(p, " + ");
			lifetime(p, n);
		}
		break;
	case 'B':
		backref(p, type, 0);
		break;
	default:
		p->pos--;
		path(p, 0);
	}
	p->depth--;
}

static void konst(struct v0 *p, int unused)
{
	const char *hex;
	uint64_t v = 0;
	size_t nh = 0;
	int c, neg = 0;

	(void)unused;
	if (!enter(p))
		return;
	if (eat(p, 'B')) {
		backref(p, konst, 0);
		p->depth--;
		return;
	}
	if (eat(p, 'p')) {
		emits(p, "_");
		p->depth--;
		return;
	}
	c = next(p);
	if (c && strchr("asxlni", c))
		neg = eat(p, 'n');
	else if (!c || !strchr("htmyojbc", c))
		p->err = 1; /* str and ADT consts: not in symbols worth it */
	hex = p->s + p->pos;
	while (!p->err && is_hex((char)peek(p))) {
		p->pos++;
		nh++;
	}
	if (p->err || !eat(p, '_')) {
		p->err = 1;
		p->depth--;
		return;
	}
	for (size_t i = 0; i < nh && nh <= 16; i++)
		v = v * 16 + (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	if (nh > 16) { /* an i128/u128 past 64 bits */
		emits(p, "0x");
		emit(p, hex, nh);
	} else if (c == 'b') {
		if (v > 1)
			p->err = 1;
		emits(p, v ? "true" : "false");
	} else if (c == 'c') {
		char b[2] = { (char)v, 0 };

		emits(p, "'");
		if (v == '\'' || v == '\\')
			emits(p, v == '\'' ? "\\'" : "\\\\");
		else if (v >= 0x20 && v < 0x7f)
			emits(p, b);
		else if (v < 0x80 || v > 0x10ffff || p->quiet || !put_utf8(p->o, (uint32_t)v))
			p->err = 1;
		emits(p, "'");
	} else {
		if (neg)
			emits(p, "-");
		if (!p->quiet)
			put_u64(p->o, v);
	}
	p->depth--;
}

static char *v0(const char *name)
{
	size_t n = without_llvm_suffix(name), end = 2;
	struct v0 p = { 0 };
	char *r = NULL;

	/* the mangled part is [A-Za-z0-9_]; a suffix (".cold") follows */
	while (end < n && (name[end] == '_' || (name[end] >= '0' && name[end] <= '9') ||
			   (name[end] >= 'a' && name[end] <= 'z') ||
			   (name[end] >= 'A' && name[end] <= 'Z')))
		end++;
	if (end < n && name[end] != '.' && name[end] != '$')
		return NULL;
	p.s = name + 2;
	p.n = end - 2;
	/* a version number after _R: only the unversioned form exists */
	if (!p.n || (peek(&p) >= '0' && peek(&p) <= '9'))
		return NULL;
	if (!(p.o = calloc(1, sizeof(*p.o))))
		return NULL;
	path(&p, 1);
	if (p.pos < p.n) { /* the instantiating crate: not shown */
		p.quiet++;
		path(&p, 0);
		p.quiet--;
	}
	if (!p.err && p.pos == p.n)
		r = finish(p.o, name + end, n - end);
	free(p.o);
	return r;
}

char *nsk_demangle_rust(const char *name)
{
	if (!name)
		return NULL;
	if (!strncmp(name, "_ZN", 3))
		return legacy(name);
	if (!strncmp(name, "_R", 2))
		return v0(name);
	return NULL;
}
