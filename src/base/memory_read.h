/* memory_read.h: copy memory that may not be mapped, without faulting.
 * World: signal-safe (process_vm_readv; under qemu-user a maps lookup). */
#ifndef EXECINFO_EX_MEMORY_READ_H
#define EXECINFO_EX_MEMORY_READ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Copy up to LENGTH bytes at ADDRESS into OUT. Returns the bytes copied
 * (fewer near the end of a mapping), or -1 with errno unchanged when none
 * can be: unmapped, not readable, or process_vm_readv refused (a seccomp
 * filter's EPERM). */
ssize_t memory_read(void *out, uintptr_t address, size_t length);

#endif
