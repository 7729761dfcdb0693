/* rule_cache.h: the call-frame rules of recently seen pcs, lock-free. */
#ifndef EXECINFO_EX_RULE_CACHE_H
#define EXECINFO_EX_RULE_CACHE_H

#include <stdint.h>

/* The common frame shape: CFA = rsp or rbp + offset, return address saved
 * at CFA + ra_offset, rbp unchanged or saved at CFA + rbp_offset; or the
 * outermost frame (_start, a thread's start), whose return address is
 * undefined: every walk that reaches the bottom of a stack ends there. */
struct simple_rule {
    uint8_t cfa_register;   /* CFI_RSP or CFI_RBP */
    uint8_t rbp_saved;      /* 0: rbp unchanged */
    uint8_t outermost;      /* 1: the walk ends here */
    int32_t cfa_offset;
    int32_t ra_offset;
    int32_t rbp_offset;
};

/* Returns 1 and the rule if PC is cached. Signal-safe, wait-free. */
int rule_cache_find(uintptr_t pc, struct simple_rule *rule);

/* The current generation: read it before looking a rule up, so that a
 * rule found before an invalidation is not stored as a new one. */
unsigned rule_cache_generation(void);

/* Remember the rule for PC, found in GENERATION; gives up rather than wait
 * if the slot is being written (by another thread or by the code this
 * handler interrupted). Signal-safe, wait-free. */
void rule_cache_store(uintptr_t pc, const struct simple_rule *rule, unsigned generation);

/* Forget everything (modules were unloaded: a pc may mean other code). */
void rule_cache_invalidate(void);

#endif
