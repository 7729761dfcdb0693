/* fault_access.h: what the faulting access did, READ, WRITE or EXECUTE,
 * and how many bytes it moved at once.
 * World: signal-safe. */
#ifndef EXECINFO_EX_FAULT_ACCESS_H
#define EXECINFO_EX_FAULT_ACCESS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

enum fault_access_direction {
    FAULT_ACCESS_UNKNOWN,   /* a sent signal, a fault without a page-fault code */
    FAULT_ACCESS_READ,
    FAULT_ACCESS_WRITE,     /* a read-modify-write (add [mem], r) faults as a write */
    FAULT_ACCESS_EXECUTE,   /* an instruction fetch: a jump to a page that is not executable */
};

struct fault_access {
    enum fault_access_direction direction;
    unsigned size;          /* bytes of one access (rep movs: one element), 0 = unknown */
};

/* Fill *ACCESS for a SIGSEGV or SIGBUS with INFO and the handler's
 * UCONTEXT (either may be NULL: all unknown). The size comes from the
 * faulting instruction's bytes, read with process_vm_readv (a pc that
 * cannot be read leaves it 0). Returns whether anything is known. */
int fault_access_decode(const siginfo_t *info, const void *ucontext, struct fault_access *access);

/* The direction's name in reports: "READ", "WRITE", "EXECUTE", NULL. */
const char *fault_access_direction_name(enum fault_access_direction direction);

/* Whether anything of ACCESS is known (fault_access_words.c). */
int fault_access_known(const struct fault_access *access);

/* ACCESS in words, for a known one: "WRITE of size 8", "READ of unknown
 * size", "EXECUTE", or for a general-protection fault "access of size 8";
 * and in JSON, {"direction":"WRITE","size":8} (direction null when only
 * the size is known, size null when only the direction is), null for
 * neither (fault_access_words.c). Signal-safe. */
struct text_out;
void fault_access_text(struct text_out *out, const struct fault_access *access);
void fault_access_json(struct text_out *out, const struct fault_access *access);

/* Per architecture (fault_access_x86_64.c, the Makefile's
 * FAULT_ARCH_SOURCES): the direction the kernel's fault code gives for a
 * fault the kernel raised, the interrupted pc, and the size of the
 * access of the instruction in CODE[0..LENGTH). */
enum fault_access_direction fault_access_arch_direction(const siginfo_t *info,
                                                        const void *ucontext);
uintptr_t fault_access_arch_pc(const void *ucontext);
unsigned fault_access_arch_size(const uint8_t *code, size_t length);

#endif
