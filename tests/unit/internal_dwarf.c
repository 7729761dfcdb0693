/* The small DWARF readers of the walker: LEB128, expressions, the rule
 * cache, and cfi_find_frame on this very program. */
#define _GNU_SOURCE
#include "unwind/dwarf_cfi.h"
#include "unwind/dwarf_expression.h"
#include "unwind/leb128.h"
#include "unwind/rule_cache.h"
#include "unwind/stack_walk.h"
#include "support.h"

Test(leb128, decodes_the_dwarf_examples)
{
    /* DWARF 5, section 7.6: 2, 127, 128, 129, 130, 12857 and their signs. */
    const uint8_t unsigned_bytes[] = { 2, 127, 0x80, 1, 0x81, 1, 0x82, 1, 0xb9, 0x64 };
    const uint64_t unsigned_values[] = { 2, 127, 128, 129, 130, 12857 };
    const uint8_t *at = unsigned_bytes;
    int failed = 0;
    for (int i = 0; i < 6; i++)
        cr_assert_eq(leb128_unsigned(&at, unsigned_bytes + sizeof unsigned_bytes, &failed),
                     unsigned_values[i]);
    cr_assert_not(failed);
    const uint8_t signed_bytes[] = { 2, 0x7e, 0xff, 0, 0x81, 0x7f, 0x80, 1, 0x80, 0x7f };
    const int64_t signed_values[] = { 2, -2, 127, -127, 128, -128 };
    at = signed_bytes;
    for (int i = 0; i < 6; i++)
        cr_assert_eq(leb128_signed(&at, signed_bytes + sizeof signed_bytes, &failed),
                     signed_values[i]);
    cr_assert_not(failed);
}

Test(leb128, a_number_cut_by_the_end_fails)
{
    const uint8_t bytes[] = { 0x80, 0x80 };
    const uint8_t *at = bytes;
    int failed = 0;
    leb128_unsigned(&at, bytes + 2, &failed);
    cr_assert(failed);
    at = bytes + 2;
    failed = 0;
    cr_assert_eq(leb128_signed(&at, bytes + 2, &failed), 0);
    cr_assert(failed);
}

static struct stack_walk walk_with(uintptr_t rsp, uintptr_t rbp)
{
    struct stack_walk walk;
    stack_walk_begin(&walk, 0x1000, rsp, rbp);
    return walk;
}

Test(dwarf_expression, evaluates_what_cfi_uses)
{
    static uintptr_t stack[8] = { 11, 22, 33, 44 };
    struct stack_walk walk = walk_with((uintptr_t)stack, 0);
    uintptr_t result;
    /* DW_OP_breg7 (rsp) 8; DW_OP_deref  =>  stack[1] */
    const uint8_t deref[] = { 0x77, 8, 0x06 };
    cr_assert_eq(dwarf_expression_evaluate(&walk, deref, sizeof deref, 0, 0, &result), 0);
    cr_assert_eq(result, 22u);
    /* initial 100; DW_OP_plus_uconst 5; DW_OP_lit3; DW_OP_shl => 840 */
    const uint8_t arithmetic[] = { 0x23, 5, 0x33, 0x24 };
    cr_assert_eq(dwarf_expression_evaluate(&walk, arithmetic, sizeof arithmetic, 1, 100, &result), 0);
    cr_assert_eq(result, 840u);
    /* The PLT rule: rsp + 8 + ((rip & 15) >= 11) << 3 */
    const uint8_t plt[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
    walk.registers[CFI_RETURN_ADDRESS] = 0x100c;
    cr_assert_eq(dwarf_expression_evaluate(&walk, plt, sizeof plt, 0, 0, &result), 0);
    cr_assert_eq(result, (uintptr_t)stack + 16);
}

Test(dwarf_expression, refuses_what_it_cannot_do)
{
    static uintptr_t stack[4];
    struct stack_walk walk = walk_with((uintptr_t)stack, 0);
    uintptr_t result;
    const uint8_t unknown_op[] = { 0x9c };        /* DW_OP_call_frame_cfa: not supported */
    cr_assert_eq(dwarf_expression_evaluate(&walk, unknown_op, 1, 0, 0, &result), -EINVAL);
    const uint8_t unknown_register[] = { 0x73, 0 };           /* rbx: not known */
    cr_assert_eq(dwarf_expression_evaluate(&walk, unknown_register, 2, 0, 0, &result), -EINVAL);
    const uint8_t bad_address[] = { 0x30, 0x06 };             /* deref of 0 */
    cr_assert_eq(dwarf_expression_evaluate(&walk, bad_address, 2, 0, 0, &result), -EINVAL);
    const uint8_t underflow[] = { 0x22 };                     /* plus on an empty stack */
    cr_assert_eq(dwarf_expression_evaluate(&walk, underflow, 1, 0, 0, &result), -EINVAL);
    const uint8_t truncated[] = { 0x0c, 1, 2 };               /* const4u cut short */
    cr_assert_eq(dwarf_expression_evaluate(&walk, truncated, 3, 0, 0, &result), -EINVAL);
}

Test(rule_cache, stores_finds_and_forgets)
{
    struct simple_rule rule = { .cfa_register = CFI_FP, .rbp_saved = 1, .cfa_offset = 16,
                                .ra_offset = -8, .rbp_offset = -16 }, found;
    cr_assert_not(rule_cache_find(0x4242, &found));
    rule_cache_store(0x4242, &rule, rule_cache_generation());
    cr_assert(rule_cache_find(0x4242, &found));
    cr_assert_eq(found.cfa_register, CFI_FP);
    cr_assert_eq(found.rbp_saved, 1);
    cr_assert_eq(found.cfa_offset, 16);
    cr_assert_eq(found.ra_offset, -8);
    cr_assert_eq(found.rbp_offset, -16);
    cr_assert_eq(found.outermost, 0);
    cr_assert_not(rule_cache_find(0x4243, &found));
    struct simple_rule bottom = { .outermost = 1 };
    rule_cache_store(0x6161, &bottom, rule_cache_generation());
    cr_assert(rule_cache_find(0x6161, &found));
    cr_assert_eq(found.outermost, 1, "the outermost frame is remembered as such");
    unsigned before = rule_cache_generation();
    rule_cache_invalidate();
    cr_assert_not(rule_cache_find(0x4242, &found));
    /* A rule found before an invalidation is stored stale, never served. */
    rule_cache_store(0x5151, &rule, before);
    cr_assert_not(rule_cache_find(0x5151, &found));
}

/* The cache's slots for the pcs of one 4 KiB page of code are on one page
 * of the cache: a program that steps through a few pages of code keeps a
 * few pages of it resident, not all of them (the profiler's peak RSS). */
Test(rule_cache, one_page_of_code_one_page_of_slots)
{
    uintptr_t base = (uintptr_t)rule_cache_slots();
    cr_assert_eq(base % 4096, 0, "the slots start on a page");
    for (uintptr_t code = 0x555555554000u; code < 0x555555554000u + 64 * 4096; code += 4096) {
        uintptr_t page = ((uintptr_t)rule_cache_slot_for(code) - base) / 4096;
        for (uintptr_t pc = code; pc < code + 4096; pc += 7)
            cr_assert_eq(((uintptr_t)rule_cache_slot_for(pc) - base) / 4096, page,
                         "pc %#lx of the page at %#lx", (unsigned long)pc, (unsigned long)code);
    }
    /* Within a page the pcs still spread over its slots. */
    char used[RULE_CACHE_SLOTS_PER_PAGE] = { 0 };
    unsigned distinct = 0;
    for (uintptr_t pc = 0x7f0000001000u; pc < 0x7f0000001000u + 4096; pc += 16) {
        size_t slot = (size_t)(rule_cache_slot_for(pc) - rule_cache_slots()) % RULE_CACHE_SLOTS_PER_PAGE;
        distinct += !used[slot];
        used[slot] = 1;
    }
    cr_assert_gt(distinct, RULE_CACHE_SLOTS_PER_PAGE / 2, "256 pcs took %u of the page's %zu slots",
                 distinct, (size_t)RULE_CACHE_SLOTS_PER_PAGE);
    /* And pages of code spread over the cache's pages. */
    char pages[RULE_CACHE_PAGES] = { 0 };
    unsigned page_count = 0;
    for (uintptr_t code = 0x7f0000000000u; code < 0x7f0000000000u + 256 * 4096; code += 4096) {
        size_t page = (size_t)(rule_cache_slot_for(code) - rule_cache_slots()) / RULE_CACHE_SLOTS_PER_PAGE;
        page_count += !pages[page];
        pages[page] = 1;
    }
    cr_assert_eq(page_count, RULE_CACHE_PAGES, "256 pages of code reach every page of the cache");
}

__attribute__((noinline)) static int plain_function(int x)
{
    return x + 1;
}

Test(dwarf_cfi, finds_the_rules_of_this_program)
{
    struct cfi_frame frame;
    cr_assert_eq(cfi_find_frame((uintptr_t)plain_function, &frame), 0);
    /* At a function's first instruction: CFA = rsp + 8, return address at CFA - 8. */
    cr_assert_eq(frame.cfa_is_expression, 0);
    cr_assert_eq(frame.cfa_register, CFI_SP);
    cr_assert_eq(frame.cfa_offset, 8);
    cr_assert_eq(frame.rules[CFI_RETURN_ADDRESS].kind, CFI_OFFSET);
    cr_assert_eq(frame.rules[CFI_RETURN_ADDRESS].offset, -8);
    cr_assert_eq(cfi_find_frame(0x10, &frame), -ENOENT);
    static int data;
    cr_assert_eq(cfi_find_frame((uintptr_t)&data, &frame), -ENOENT);
    cr_assert_eq(plain_function(1), 2);
}
