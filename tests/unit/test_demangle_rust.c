/* Rust demangling (record/stacks/demangle_rust.c) on names taken with nm
 * from real binaries: legacy names from a program built by Debian's rustc
 * 1.63 (its std is legacy-mangled), v0 names from programs built with
 * -C symbol-mangling-version=v0 by rustc 1.63 and 1.95 (whose std is v0);
 * each answer checked against binutils' c++filt with its hashes and crate
 * disambiguators taken off.  Then the edges: names that are not Rust's,
 * malformed names, and hostile ones made to recurse or blow up. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/stacks/demangle_rust.h"
#include "record/stacks/symbols.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *mangled, *want;
} real[] = {
/* legacy */
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17hc01b12d36e7ad096E",
	  "hashbrown::raw::RawTable<T,A>::reserve_rehash" },
	{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17he283e3dede2f7e7dE.llvm.522694742067693248",
	  "std::rt::lang_start::{{closure}}" },
	{ "_ZN36_$LT$T$u20$as$u20$core..any..Any$GT$7type_id17h0976df0ec15ad1bfE",
	  "<T as core::any::Any>::type_id" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..traits..iterator..Iterator$GT$4fold17h95e1f3dcc881d651E",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold" },
	{ "_ZN3hot4fill17hce72d897527c27a8E",
	  "hot::fill" },
	{ "_ZN12panic_unwind5dwarf2eh20read_encoded_pointer17h2a54419ccfa1d320E.llvm.16159844760554946847",
	  "panic_unwind::dwarf::eh::read_encoded_pointer" },
	{ "_ZN3std10sys_common9backtrace10_print_fmt28_$u7b$$u7b$closure$u7d$$u7d$28_$u7b$$u7b$closure$u7d$$u7d$17hf7b3e443a28e4e2fE",
	  "std::sys_common::backtrace::_print_fmt::{{closure}}::{{closure}}" },
	{ "_ZN3std2io5stdio19OUTPUT_CAPTURE_USED17h39e9e3e6024dec58E.0.llvm.8113091291293138400",
	  "std::io::stdio::OUTPUT_CAPTURE_USED.0" },
	{ "_ZN4core3num7dec2flt11pfe_invalid17h4948f648bf2f5b2bE",
	  "core::num::dec2flt::pfe_invalid" },
	{ "_ZN42_$LT$str$u20$as$u20$core..fmt..Display$GT$3fmt17h13e2219db14811f9E",
	  "<str as core::fmt::Display>::fmt" },
	{ "_ZN9hashbrown3raw11Fallibility17capacity_overflow17h8608bc68868f69bdE",
	  "hashbrown::raw::Fallibility::capacity_overflow" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h0b862a2d068a2654E",
	  "<&T as core::fmt::Debug>::fmt" },
	{ "_ZN50_$LT$$BP$mut$u20$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h2a5b17296eb711a0E",
	  "<*mut T as core::fmt::Debug>::fmt" },
	{ "_ZN4core3ptr176drop_in_place$LT$alloc..boxed..Box$LT$$u5b$addr2line..function..InlinedFunction$LT$gimli..read..endian_slice..EndianSlice$LT$gimli..endianity..LittleEndian$GT$$GT$$u5d$$GT$$GT$17h28210964b0848039E",
	  "core::ptr::drop_in_place<alloc::boxed::Box<[addr2line::function::InlinedFunction<gimli::read::endian_slice::EndianSlice<gimli::endianity::LittleEndian>>]>>" },
	{ "_ZN70_$LT$std..sync..once..WaiterQueue$u20$as$u20$core..ops..drop..Drop$GT$4drop17hdbdd74e13d265b9aE",
	  "<std::sync::once::WaiterQueue as core::ops::drop::Drop>::drop" },
/* v0 */
	{ "_RINvCs9YSfaoTXO5M_4rich3arrKb1_Kc7a_EB2_",
	  "rich::arr::<true, 'z'>" },
	{ "_RNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0Cs9YSfaoTXO5M_4rich.llvm.5260558119064830553",
	  "std::rt::lang_start::<()>::{closure#0}" },
	{ "_RNSNvYNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0INtNtNtCs6IL9ONYDOZW_4core3ops8function6FnOnceuE9call_once6vtableCs9YSfaoTXO5M_4rich.llvm.5260558119064830553",
	  "<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}" },
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_INtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6OutputuNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<(&'a std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + core::marker::Send>>" },
	{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
	  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), std::alloc::System>>::grow_one" },
	{ "_RNvXs1j_NtCsgEmfK2I1SDS_4core3fmtQDNtNtB8_5panic12PanicPayloadEL_NtB6_7Display3fmtCsjrHSEGnQ3l9_3std",
	  "<&mut dyn core::panic::PanicPayload as core::fmt::Display>::fmt" },
	{ "_RNvMs_Cs9YSfaoTXO5M_4richINtB4_4WrapINtNtCsihNoVIYWwLU_5alloc3vec3VechEE4showB4_",
	  "<rich::Wrap<alloc::vec::Vec<u8>>>::show" },
	{ "_RINvNtCsihNoVIYWwLU_5alloc5alloc8box_freeATNtNtB4_6string6StringINtNtCs6IL9ONYDOZW_4core6option6OptionReEEj1_NtB2_6GlobalECs9YSfaoTXO5M_4rich",
	  "alloc::alloc::box_free::<[(alloc::string::String, core::option::Option<&str>); 1], alloc::alloc::Global>" },
	{ "_RINvNtNtCsdyIG5SqMl5y_3std10sys_common9backtrace28___rust_begin_short_backtraceFEuuECs9YSfaoTXO5M_4rich",
	  "std::sys_common::backtrace::__rust_begin_short_backtrace::<fn(), ()>" },
	{ "_RINvNtCs6IL9ONYDOZW_4core3ptr13drop_in_placeINtNtCsihNoVIYWwLU_5alloc5boxed3BoxDNtCs9YSfaoTXO5M_4rich5ShapeEL_EEB1i_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn rich::Shape>>" },
	{ "_RINvMNtCsgEmfK2I1SDS_4core5sliceSh11copy_withinINtNtNtB5_3ops5range14RangeInclusivejEECsfEOYDRpO4Ta_11miniz_oxide",
	  "<[u8]>::copy_within::<core::ops::range::RangeInclusive<usize>>" },
	{ "_RINvXs_NvMNtCslNYArtu3iFV_5alloc5sliceSp9to_vec_inhNtB5_10ConvertVec6to_vecNtNtBa_5alloc6GlobalECsjrHSEGnQ3l9_3std",
	  "<u8 as <[_]>::to_vec_in::ConvertVec>::to_vec::<alloc::alloc::Global>" },
	{ "_RINvMs4_NtCsgY6Mt91CT9J_14rustc_demangle2v0NtB6_7Printer13print_backrefNCNvB2_10print_paths_0EB8_",
	  "<rustc_demangle::v0::Printer>::print_backref::<<rustc_demangle::v0::Printer>::print_path::{closure#1}>" },
	{ "_RNvXCs9YSfaoTXO5M_4richINtB2_2SqKj3_ENtB2_5Shape4areaB2_",
	  "<rich::Sq<3> as rich::Shape>::area" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_backtraceNCNvNtB6_5alloc8rust_oom0zEB6_",
	  "std::sys::backtrace::__rust_end_short_backtrace::<std::alloc::rust_oom::{closure#0}, !>" },
	{ "_RNvCsfLfy6EI15iL_7___rustc35___rust_no_alloc_shim_is_unstable_v2",
	  "__rustc::__rust_no_alloc_shim_is_unstable_v2" },
	/* punycode identifiers (mod größe { fn grün }, mod ραντάρ { fn φίλτρο }) */
	{ "_RNvNtCs4eYjyvNHrqb_3uniu9gre_6ka8iu7grn_ioa",
	  "uni::größe::grün" },
	{ "_RNvNtCs4eYjyvNHrqb_3uniu9hxaj0bodqu8kxaymhoj",
	  "uni::ραντάρ::φίλτρο" },
	/* from the v0 RFC's examples */
	{ "_RNvC6_123foo3bar", "123foo::bar" },
	{ "_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_",
	  "cc::spawn::{closure#0}::{closure#0}" },
	{ "_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_ECs1iopQbuBiw2_3std",
	  "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>" },
};

START_TEST(test_real_names)
{
	for (size_t i = 0; i < N(real); i++) {
		char *d = nsk_demangle_rust(real[i].mangled);

		ck_assert_msg(d, "not demangled: %s", real[i].mangled);
		ck_assert_str_eq(d, real[i].want);
		/* and through the demangler symbols.c uses for every name */
		free(d);
		d = nsk_demangle(real[i].mangled);
		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d, real[i].want);
		free(d);
	}
}
END_TEST

START_TEST(test_suffixes)
{
	char *d = nsk_demangle_rust("_ZN3hot4fill17hce72d897527c27a8E.cold");

	/* a suffix other than .llvm.: kept, as rustc-demangle keeps it */
	ck_assert_str_eq(d, "hot::fill.cold");
	free(d);
	d = nsk_demangle_rust("_RNvCs7fattgR6AAa_3hot4fill.cold.1");
	ck_assert_str_eq(d, "hot::fill.cold.1");
	free(d);
	/* .llvm. followed by something that is not its hash: not stripped */
	d = nsk_demangle_rust("_ZN3hot4fill17hce72d897527c27a8E.llvm.xyz");
	ck_assert_str_eq(d, "hot::fill.llvm.xyz");
	free(d);
}
END_TEST

START_TEST(test_not_rust)
{
	static const char *const names[] = {
		"main", "malloc", "", "_Z", "_ZN", "_R",
		/* C++: left to the C++ demangler */
		"_ZN3foo3barEv", "_ZNSt6vectorIiSaIiEE9push_backERKi",
		"_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
		/* a C++ variable shaped like a Rust path, without the hash */
		"_ZN3foo3barE",
		/* a hash that is not 16 hex digits */
		"_ZN3foo3bar16h0123456789abcdeE", "_ZN3foo17hxxxxxxxxxxxxxxxxE",
		/* only a hash */
		"_ZN17h0123456789abcdefE",
		/* something after the E that is not a suffix */
		"_ZN3foo17h0123456789abcdefEv",
		/* lengths past the end, leading zeros */
		"_ZN99foo17h0123456789abcdefE", "_ZN03foo17h0123456789abcdefE",
		/* v0: versioned, bad tags, cut short, trailing junk */
		"_R0NvC3foo3bar", "_RQ", "_RNvC3foo", "_RNvC3foo3barX",
		"_RNvC3foo3bar!", "_RC", "_RNvC99foo3bar",
		/* backrefs forward or to themselves */
		"_RB_", "_RNvB0_3bar", "_RINvC3foo3barBa_E",
		/* a lifetime no binder bound, a bad const */
		"_RINvC3foo3barRL1_hE", "_RINvC3foo3barKb2_E", "_RINvC3foo3barKeE",
	};

	for (size_t i = 0; i < N(names); i++) {
		char *d = nsk_demangle_rust(names[i]);

		ck_assert_msg(!d, "%s demangled as %s", names[i], d);
	}
	ck_assert_ptr_null(nsk_demangle_rust(NULL));
}
END_TEST

START_TEST(test_cxx_unchanged)
{
	char *d = nsk_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");

	ck_assert_str_eq(d, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(d);
	d = nsk_demangle("_ZN3foo3barEv");
	ck_assert_str_eq(d, "foo::bar()");
	free(d);
	ck_assert_ptr_null(nsk_demangle("main"));
}
END_TEST

/* Hostile names: deep nesting, backref fans that would be exponential,
 * output past the bound.  Each must end quickly with NULL or a bounded
 * string, never overflow the stack. */
START_TEST(test_hostile)
{
	size_t n = 200000, len;
	char *s = malloc(n + 64);

	/* deep: _R + "RRRR...h" */
	memcpy(s, "_R", 2);
	memset(s + 2, 'R', n);
	strcpy(s + 2 + n, "h");
	ck_assert_ptr_null(nsk_demangle_rust(s));
	/* deep generic nesting: IIII...C3foo EEEE */
	len = 2;
	for (int i = 0; i < 5000; i++)
		s[len++] = 'I';
	memcpy(s + len, "C3foo", 5);
	len += 5;
	for (int i = 0; i < 5000; i++)
		s[len++] = 'E';
	s[len] = 0;
	ck_assert_ptr_null(nsk_demangle_rust(s));
	/* a long legacy name: bounded output */
	len = 3;
	memcpy(s, "_ZN", 3);
	for (int i = 0; i < 2000; i++)
		len += (size_t)sprintf(s + len, "5abcde");
	strcpy(s + len, "17h0123456789abcdefE");
	ck_assert_ptr_null(nsk_demangle_rust(s));
	free(s);
}
END_TEST

/* Backrefs that reuse a type whose own printing uses backrefs: a fan-out
 * of 2^k printed nodes from a name of O(k) bytes.  The work bound stops
 * it however little each node prints. */
START_TEST(test_backref_fan)
{
	char s[4096], *d;
	/* _R I Nv C0_ 3foo <arg> E: the arg is a tuple (B<t> B<t>) of the
	 * tuple before it, 40 deep, around (): 2^40 nodes to print */
	size_t len = (size_t)sprintf(s, "_RINvC0_3fooTuE"), prev = 10;

	for (int i = 0; i < 40; i++) {
		size_t at = len - 2, v = prev - 1, k = 0;
		char b62[16], tmp[16];

		/* base-62 of prev: digits of prev - 1, then "_" */
		do {
			int dg = (int)(v % 62);

			tmp[k++] = (char)(dg < 10 ? '0' + dg : dg < 36 ? 'a' + dg - 10 :
					  'A' + dg - 36);
			v /= 62;
		} while (v);
		for (size_t j = 0; j < k; j++)
			b62[j] = tmp[k - 1 - j];
		b62[k] = '_';
		b62[k + 1] = 0;
		len += (size_t)sprintf(s + len, "TB%sB%sE", b62, b62);
		prev = at;
	}
	strcpy(s + len, "E");
	d = nsk_demangle_rust(s);
	ck_assert(!d || strlen(d) < 4096);
	free(d);
	/* a small fan prints whole */
	d = nsk_demangle_rust("_RINvC0_3fooTuETB9_B9_EE");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d, "::foo::<((),), (((),), ((),))>");
	free(d);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("demangle_rust");
	TCase *tc = tcase_create("names");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_real_names);
	tcase_add_test(tc, test_suffixes);
	tcase_add_test(tc, test_not_rust);
	tcase_add_test(tc, test_cxx_unchanged);
	tcase_add_test(tc, test_hostile);
	tcase_add_test(tc, test_backref_fan);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
