/* dwarf_cfi.c: find and run the DWARF call-frame program for one pc.
 * World: signal-safe.
 *
 * Why not libunwind here: its local unwinder finds unwind tables through
 * dl_iterate_phdr, whose loader lock a signal can interrupt halfway
 * through its own acquisition; the handler then waits for itself (seen in
 * tests/stress/test_alarm.c, with libunwind's cache on or off). Its remote
 * interface would take a custom lookup, but allocates the unwind info of
 * every lookup from a mutex-guarded pool it never gives back to a custom
 * address space. glibc's _dl_find_object (2.35+) is lock-free and
 * async-signal-safe: it gives the module's .eh_frame_hdr, whose sorted
 * table leads to the FDE; this file runs the FDE's program. A fully
 * static program has no such table (gcc -static passes no --eh-frame-hdr):
 * there the program's .eh_frame is searched entry by entry
 * (eh_frame_locate.c finds it). */
#define _GNU_SOURCE
#include "dwarf_cfi.h"
#include "eh_frame_locate.h"
#include "leb128.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#define REMEMBER_DEPTH 2   /* compilers nest remember_state once */

/* Pointer encodings (DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_FORMAT_MASK 0x0f
#define PE_APPLICATION_MASK 0x70
#define PE_INDIRECT 0x80

struct reader {
    const uint8_t *at, *end;
    uintptr_t data_base;    /* for datarel: the .eh_frame_hdr */
    int failed;
};

static uint8_t read_u8(struct reader *r)
{
    if (r->at >= r->end) {
        r->failed = 1;
        return 0;
    }
    return *r->at++;
}

static uint64_t read_fixed(struct reader *r, size_t size)
{
    uint64_t value = 0;
    if ((size_t)(r->end - r->at) < size) {
        r->failed = 1;
        r->at = r->end;
        return 0;
    }
    memcpy(&value, r->at, size); /* x86_64 and aarch64 are little-endian */
    r->at += size;
    return value;
}

static uint64_t read_uleb(struct reader *r)
{
    return leb128_unsigned(&r->at, r->end, &r->failed);
}

static int64_t read_sleb(struct reader *r)
{
    return leb128_signed(&r->at, r->end, &r->failed);
}

static uint64_t read_encoded(struct reader *r, uint8_t encoding)
{
    uintptr_t position = (uintptr_t)r->at;
    uint64_t value;

    if (encoding == PE_OMIT)
        return 0;
    switch (encoding & PE_FORMAT_MASK) {
    case 0x00: value = read_fixed(r, 8); break;
    case 0x01: value = read_uleb(r); break;
    case 0x02: value = read_fixed(r, 2); break;
    case 0x03: value = read_fixed(r, 4); break;
    case 0x04: value = read_fixed(r, 8); break;
    case 0x09: value = (uint64_t)read_sleb(r); break;
    case 0x0a: value = (uint64_t)(int64_t)(int16_t)read_fixed(r, 2); break;
    case 0x0b: value = (uint64_t)(int64_t)(int32_t)read_fixed(r, 4); break;
    case 0x0c: value = read_fixed(r, 8); break;
    default: r->failed = 1; return 0;
    }
    switch (encoding & PE_APPLICATION_MASK) {
    case 0x00: break;
    case 0x10: value += position; break;
    case 0x30: value += r->data_base; break;
    default: r->failed = 1; return 0; /* textrel, funcrel, aligned: not in .eh_frame */
    }
    if (encoding & PE_INDIRECT)
        r->failed = 1; /* only personality pointers use it, and we skip those */
    return value;
}

/* The module's mapping: no table or entry may reach outside it. */
struct bounds {
    uintptr_t low, high;
};

/* ---- .eh_frame_hdr ------------------------------------------------------ */

/* The FDE for PC from the binary-search table (datarel sdata4 pairs). */
static const uint8_t *search_table(const uint8_t *header, const struct bounds *bounds,
                                   uintptr_t pc)
{
    struct reader r = { header + 4, header + 4 + 16, (uintptr_t)header, 0 };
    if (header[0] != 1 || header[3] != 0x3b) /* version 1, datarel|sdata4 */
        return NULL;
    read_encoded(&r, header[1]);                 /* eh_frame_ptr */
    uint64_t count = read_encoded(&r, header[2]);
    if (r.failed || count == 0)
        return NULL;
    const int32_t *table = (const int32_t *)r.at;
    if ((uintptr_t)table < bounds->low || count > (bounds->high - (uintptr_t)table) / 8)
        return NULL;
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if ((uintptr_t)header + (intptr_t)table[2 * middle] <= pc)
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0)
        return NULL;
    return header + table[2 * (low - 1) + 1];
}

/* ---- CIE and FDE -------------------------------------------------------- */

struct cie {
    uint64_t code_alignment;
    int64_t data_alignment;
    uint64_t return_column;
    uint8_t fde_encoding;
    int has_augmentation_data;
    int signal_frame;
    const uint8_t *instructions, *end;
};

/* An entry's length and where it ends; NULL for the terminator or junk. */
static const uint8_t *entry_body(const uint8_t *entry, const struct bounds *bounds,
                                 const uint8_t **end)
{
    uint32_t length;
    if ((uintptr_t)entry < bounds->low || (uintptr_t)entry > bounds->high - 8)
        return NULL;
    memcpy(&length, entry, 4);
    if (length == 0 || length == 0xffffffffu) /* 64-bit DWARF is not in .eh_frame */
        return NULL;
    if (length > bounds->high - (uintptr_t)entry - 4)
        return NULL;
    *end = entry + 4 + length;
    return entry + 4;
}

static int parse_augmentation(struct reader *r, const char *augmentation, struct cie *cie)
{
    if (augmentation[0] != 'z')
        return augmentation[0] == '\0' ? 0 : -EINVAL;
    uint64_t length = read_uleb(r);
    if (r->failed || length > (uint64_t)(r->end - r->at))
        return -EINVAL;
    const uint8_t *after = r->at + length;
    cie->has_augmentation_data = 1;
    for (const char *c = augmentation + 1; *c && !r->failed; c++) {
        switch (*c) {
        case 'R': cie->fde_encoding = read_u8(r); break;
        case 'L': read_u8(r); break;
        case 'P': { uint8_t encoding = read_u8(r) & 0x7f; read_encoded(r, encoding); break; }
        case 'S': cie->signal_frame = 1; break;
        case 'B': case 'G': break;
        default: r->at = after; return 0; /* unknown: the length lets us skip it */
        }
    }
    if (r->failed || after > r->end)
        return -EINVAL;
    r->at = after;
    return 0;
}

static int parse_cie(const uint8_t *cie_entry, uintptr_t data_base, const struct bounds *bounds,
                     struct cie *cie)
{
    const uint8_t *end;
    const uint8_t *body = entry_body(cie_entry, bounds, &end);
    if (body == NULL)
        return -EINVAL;
    struct reader r = { body, end, data_base, 0 };
    if (read_fixed(&r, 4) != 0)
        return -EINVAL; /* not a CIE */
    uint8_t version = read_u8(&r);
    const char *augmentation = (const char *)r.at;
    size_t length = strnlen(augmentation, (size_t)(r.end - r.at));
    if (length == (size_t)(r.end - r.at) || strstr(augmentation, "eh") != NULL)
        return -EINVAL;
    r.at += length + 1;
    memset(cie, 0, sizeof *cie);
    cie->fde_encoding = 0;
    cie->code_alignment = read_uleb(&r);
    cie->data_alignment = read_sleb(&r);
    cie->return_column = version == 1 ? read_u8(&r) : read_uleb(&r);
    if (r.failed || parse_augmentation(&r, augmentation, cie) < 0)
        return -EINVAL;
    cie->instructions = r.at;
    cie->end = end;
    return 0;
}

/* ---- the call-frame program ---------------------------------------------- */

struct program {
    struct reader r;
    const struct cie *cie;
    uintptr_t location, target;
    struct cfi_frame *frame;
    const struct cfi_frame *initial;   /* state after the CIE, for restore */
    struct cfi_frame remembered[REMEMBER_DEPTH];
    int remembered_count;
};

static struct cfi_rule *rule_for(struct program *p, uint64_t number)
{
    if (number >= CFI_REGISTER_COUNT)
        return NULL; /* vector registers: unwinding does not need them */
    return &p->frame->rules[number];
}

/* Offsets and places must fit the compact rule; CFI from real compilers
 * is far inside these bounds. */
static int32_t checked_offset(struct program *p, int64_t value)
{
    if (value != (int32_t)value)
        p->r.failed = 1;
    return (int32_t)value;
}

static int32_t place_of(struct program *p, const uint8_t *block, uint64_t length)
{
    if (length > UINT16_MAX)
        p->r.failed = 1;
    return checked_offset(p, (int64_t)((uintptr_t)block - (uintptr_t)p->frame->base));
}

static void set_rule(struct program *p, uint64_t number, uint8_t kind, int64_t offset)
{
    struct cfi_rule *rule = rule_for(p, number);
    if (rule != NULL) {
        rule->kind = kind;
        rule->offset = checked_offset(p, offset);
    }
}

static void restore_rule(struct program *p, uint64_t number)
{
    struct cfi_rule *rule = rule_for(p, number);
    if (rule != NULL)
        *rule = p->initial ? p->initial->rules[number] : (struct cfi_rule){ 0 };
}

static void set_expression(struct program *p, uint64_t number, uint8_t kind)
{
    uint64_t length = read_uleb(&p->r);
    struct cfi_rule *rule = rule_for(p, number);
    if (length > (uint64_t)(p->r.end - p->r.at)) {
        p->r.failed = 1;
        return;
    }
    if (rule != NULL) {
        rule->kind = kind;
        rule->offset = place_of(p, p->r.at, length);
        rule->expression_length = (uint16_t)length;
    }
    p->r.at += length;
}

/* Returns 1 when the location passed the target: stop there. */
static int advance(struct program *p, uint64_t delta)
{
    p->location += delta * p->cie->code_alignment;
    return p->location > p->target;
}

static int run_extended(struct program *p, uint8_t opcode)
{
    struct reader *r = &p->r;
    struct cfi_frame *f = p->frame;
    int64_t data_alignment = p->cie->data_alignment;
    uint64_t number;

    switch (opcode) {
    case 0x00: return 0;                                           /* nop */
    case 0x01: p->location = read_encoded(r, p->cie->fde_encoding); /* set_loc */
               return p->location > p->target;
    case 0x02: return advance(p, read_u8(r));
    case 0x03: return advance(p, read_fixed(r, 2));
    case 0x04: return advance(p, read_fixed(r, 4));
    case 0x05: number = read_uleb(r);
               set_rule(p, number, CFI_OFFSET, (int64_t)read_uleb(r) * data_alignment); return 0;
    case 0x06: restore_rule(p, read_uleb(r)); return 0;
    case 0x07: set_rule(p, read_uleb(r), CFI_UNDEFINED, 0); return 0;
    case 0x08: set_rule(p, read_uleb(r), CFI_SAME, 0); return 0;
    case 0x09: { number = read_uleb(r);
                 uint64_t other = read_uleb(r);
                 struct cfi_rule *rule = rule_for(p, number);
                 if (rule && other < CFI_REGISTER_COUNT) { rule->kind = CFI_REGISTER; rule->number = (uint8_t)other; }
                 return 0; }
    case 0x0a: if (p->remembered_count == REMEMBER_DEPTH) { r->failed = 1; return 0; }
               p->remembered[p->remembered_count++] = *f; return 0;
    case 0x0b: if (p->remembered_count == 0) { r->failed = 1; return 0; }
               { int signal_frame = f->signal_frame;
                 *f = p->remembered[--p->remembered_count];
                 f->signal_frame = signal_frame; }
               return 0;
    case 0x0c: f->cfa_register = (uint8_t)read_uleb(r);
               f->cfa_offset = checked_offset(p, (int64_t)read_uleb(r));
               f->cfa_is_expression = 0; return 0;
    case 0x0d: f->cfa_register = (uint8_t)read_uleb(r); f->cfa_is_expression = 0; return 0;
    case 0x0e: f->cfa_offset = checked_offset(p, (int64_t)read_uleb(r)); return 0;
    case 0x0f: { uint64_t length = read_uleb(r);
                 if (length > (uint64_t)(r->end - r->at)) { r->failed = 1; return 0; }
                 f->cfa_is_expression = 1; f->cfa_offset = place_of(p, r->at, length);
                 f->cfa_expression_length = (uint16_t)length; r->at += length; return 0; }
    case 0x10: set_expression(p, read_uleb(r), CFI_EXPRESSION); return 0;
    case 0x11: number = read_uleb(r);
               set_rule(p, number, CFI_OFFSET, read_sleb(r) * data_alignment); return 0;
    case 0x12: f->cfa_register = (uint8_t)read_uleb(r);
               f->cfa_offset = checked_offset(p, read_sleb(r) * data_alignment);
               f->cfa_is_expression = 0; return 0;
    case 0x13: f->cfa_offset = checked_offset(p, read_sleb(r) * data_alignment); return 0;
    case 0x14: number = read_uleb(r);
               set_rule(p, number, CFI_VALUE_OFFSET, (int64_t)read_uleb(r) * data_alignment); return 0;
    case 0x15: number = read_uleb(r);
               set_rule(p, number, CFI_VALUE_OFFSET, read_sleb(r) * data_alignment); return 0;
    case 0x16: set_expression(p, read_uleb(r), CFI_VALUE_EXPRESSION); return 0;
    case 0x2d: return 0; /* AARCH64_negate_ra_state (pac-ret): every return
                          * address is stripped (unwind_arch_strip); on
                          * x86-64, GNU_window_save, which has no operand either */
    case 0x2e: read_uleb(r); return 0;                             /* GNU_args_size */
    case 0x2f: number = read_uleb(r);                              /* GNU_negative_offset_extended */
               set_rule(p, number, CFI_OFFSET, -(int64_t)read_uleb(r) * data_alignment); return 0;
    default:   r->failed = 1; return 0;
    }
}

static int run_program(struct program *p)
{
    while (p->r.at < p->r.end && !p->r.failed) {
        uint8_t opcode = read_u8(&p->r);
        uint8_t operand = opcode & 0x3f;
        int stop = 0;
        switch (opcode & 0xc0) {
        case 0x40: stop = advance(p, operand); break;
        case 0x80: set_rule(p, operand, CFI_OFFSET,
                            (int64_t)read_uleb(&p->r) * p->cie->data_alignment); break;
        case 0xc0: restore_rule(p, operand); break;
        default:   stop = run_extended(p, opcode); break;
        }
        if (stop)
            return 0;
    }
    return p->r.failed ? -EINVAL : 0;
}

static int run_fde(const uint8_t *fde, uintptr_t data_base, const struct bounds *bounds,
                   uintptr_t pc, struct cfi_frame *frame)
{
    const uint8_t *end;
    const uint8_t *body = entry_body(fde, bounds, &end);
    if (body == NULL || end - body < 4)
        return -ENOENT;
    int32_t cie_pointer;
    memcpy(&cie_pointer, body, 4);
    struct cie cie;
    if (cie_pointer == 0 || parse_cie(body - cie_pointer, data_base, bounds, &cie) < 0)
        return -EINVAL;
    struct reader r = { body + 4, end, data_base, 0 };
    uintptr_t start = read_encoded(&r, cie.fde_encoding);
    uintptr_t range = read_encoded(&r, cie.fde_encoding & PE_FORMAT_MASK);
    if (cie.has_augmentation_data) {
        uint64_t length = read_uleb(&r);
        if (r.failed || length > (uint64_t)(r.end - r.at))
            return -EINVAL;
        r.at += length;
    }
    if (r.failed || pc < start || pc - start >= range)
        return -ENOENT;

    memset(frame, 0, sizeof *frame);
    frame->base = (const uint8_t *)bounds->low;
    frame->signal_frame = (uint8_t)cie.signal_frame;
    struct program p = { .r = { cie.instructions, cie.end, data_base, 0 }, .cie = &cie,
                         .location = start, .target = pc, .frame = frame };
    if (cie.return_column != CFI_RETURN_ADDRESS || run_program(&p) < 0)
        return -EINVAL;
    struct cfi_frame initial = *frame;
    p.initial = &initial;
    p.r = (struct reader){ r.at, end, data_base, 0 };
    p.location = start;
    return run_program(&p);
}

/* ---- where the table is ------------------------------------------------- */

/* The first byte of the file this code is linked into, its ELF header:
 * the program itself when the library is linked statically (the linker
 * defines it). An array of unknown size: the program headers follow the
 * header, past what a declared Elf64_Ehdr object would allow. */
extern const unsigned char __ehdr_start[] __attribute__((visibility("hidden")));

/* The load bias and mapped extent of the file this code is linked into,
 * if PC lies in one of its executable segments, from its program headers.
 * Reads only mapped memory: no syscall, no lock. */
static int own_file_holds(uintptr_t pc, uintptr_t *bias_out, struct bounds *bounds)
{
    const ElfW(Ehdr) *file = (const ElfW(Ehdr) *)__ehdr_start;
    const ElfW(Phdr) *headers = (const ElfW(Phdr) *)((const char *)file + file->e_phoff);
    uintptr_t bias = 0, low = UINTPTR_MAX, high = 0;
    int in_code = 0;

    for (unsigned i = 0; i < file->e_phnum; i++)
        if (headers[i].p_type == PT_LOAD && headers[i].p_offset == 0)
            bias = (uintptr_t)file - headers[i].p_vaddr;
    for (unsigned i = 0; i < file->e_phnum; i++) {
        const ElfW(Phdr) *header = &headers[i];
        uintptr_t start = bias + header->p_vaddr, end = start + header->p_memsz;
        if (header->p_type != PT_LOAD)
            continue;
        low = start < low ? start : low;
        high = end > high ? end : high;
        in_code |= (header->p_flags & PF_X) && pc >= start && pc < end;
    }
    *bias_out = bias;
    *bounds = (struct bounds){ low, high };
    return in_code;
}

/* The FDE for PC by a walk over every entry of a .eh_frame that has no
 * search table: slower, and only for a program linked without
 * .eh_frame_hdr (gcc -static); the rule cache spares most repeats. */
static int scan_section(uintptr_t pc, struct cfi_frame *frame)
{
    struct eh_frame_section section;
    struct bounds file, within;
    uintptr_t bias;
    const uint8_t *end;

    if (!own_file_holds(pc, &bias, &file) ||
        eh_frame_locate_program((const ElfW(Ehdr) *)__ehdr_start, &section) < 0)
        return -ENOENT;
    within = (struct bounds){ bias + section.address, bias + section.address + section.size };
    if (within.low < file.low || within.high > file.high || within.high < within.low + 8)
        return -ENOENT;
    for (const uint8_t *entry = (const uint8_t *)within.low;
         entry_body(entry, &within, &end) != NULL; entry = end) {
        uint32_t cie_id;
        memcpy(&cie_id, entry + 4, 4);
        if (cie_id == 0)
            continue; /* a CIE */
        if (run_fde(entry, 0, &within, pc, frame) == 0)
            return 0;
    }
    return -ENOENT;
}

int cfi_find_frame(uintptr_t pc, struct cfi_frame *frame)
{
    struct dl_find_object object;

    if (_dl_find_object((void *)pc, &object) != 0 || object.dlfo_eh_frame == NULL)
        return scan_section(pc, frame);
    const uint8_t *header = object.dlfo_eh_frame;
    struct bounds bounds = { (uintptr_t)object.dlfo_map_start, (uintptr_t)object.dlfo_map_end };
    if ((uintptr_t)header < bounds.low || (uintptr_t)header > bounds.high - 20)
        return -ENOENT;
    const uint8_t *fde = search_table(header, &bounds, pc);
    if (fde == NULL)
        return -ENOENT;
    return run_fde(fde, (uintptr_t)header, &bounds, pc, frame);
}
