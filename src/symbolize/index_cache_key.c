/* index_cache_key.c: the name of a module's file in the index cache
 * (index_cache_key.h).
 * World: signal-safe (stat, and pure code): the crash handler names the
 * files itself when the load left the index to it (index_at_crash.c). */
#include "index_cache_key.h"
#include "module_data.h"

#include <string.h>

static unsigned char builder_id[MODULE_BUILD_ID_MAX];
static unsigned builder_id_length;

void index_cache_key_set_builder(const unsigned char *id, unsigned length)
{
    if (length > MODULE_BUILD_ID_MAX)
        length = 0;
    /* The same id again (a load after a crash-time build, which set it):
     * not rewritten, so a key being made meanwhile never sees it zeroed. */
    if (length == builder_id_length && memcmp(id, builder_id, length) == 0)
        return;
    memcpy(builder_id, id, length);
    memset(builder_id + length, 0, sizeof builder_id - length);
    builder_id_length = length;
}

unsigned index_cache_key_builder_length(void)
{
    return builder_id_length;
}

int index_cache_line_mode(size_t line_budget, int line_flags)
{
    if (line_budget == 0)
        return 0;
    return 1 + ((line_flags & LINE_INLINES) != 0) + 2 * ((line_flags & LINE_OWN_TABLE_ONLY) != 0);
}

int index_cache_key_of(const struct module_info *module, int line_mode, int demangle,
                       const char *roots, struct cache_key *key)
{
    memset(key, 0, sizeof *key);
    if (builder_id_length == 0 || module->build_id_length == 0)
        return -1;
    if (module->memory_image != NULL) {
        key->identity[2] = module->memory_size;
    } else {
        struct stat file;
        if (stat(module->file_path, &file) != 0 || !S_ISREG(file.st_mode))
            return -1;
        key->identity[0] = (uint64_t)file.st_dev;
        key->identity[1] = (uint64_t)file.st_ino;
        key->identity[2] = (uint64_t)file.st_size;
        key->identity[3] = (uint64_t)file.st_mtim.tv_sec;
        key->identity[4] = (uint64_t)file.st_mtim.tv_nsec;
    }
    /* The path too: the debug file candidates follow its directory; and
     * the debug roots, which give other candidates (a root added later
     * must be searched, not answered from a copy made without it). */
    uint64_t lanes[4] = { CACHE_FORMAT, (uint64_t)line_mode, 5 + (uint64_t)(demangle != 0), 7 };
    index_cache_mix(builder_id, builder_id_length, lanes);
    index_cache_mix((const unsigned char *)key->identity, sizeof key->identity, lanes);
    const char *key_path = module->key_path != NULL ? module->key_path : module->file_path;
    index_cache_mix((const unsigned char *)key_path, strlen(key_path), lanes);
    index_cache_mix((const unsigned char *)roots, strlen(roots), lanes);
    uint64_t hash = lanes[0] ^ lanes[1] * 3 ^ lanes[2] * 5 ^ lanes[3] * 7;
    static const char digits[] = "0123456789abcdef";
    char *at = key->name;
    for (unsigned i = 0; i < module->build_id_length; i++) {
        *at++ = digits[module->build_id[i] >> 4];
        *at++ = digits[module->build_id[i] & 15];
    }
    *at++ = '-';
    for (int shift = 60; shift >= 0; shift -= 4)
        *at++ = digits[(hash >> shift) & 15];
    memcpy(at, ".idx", 5);
    return 0;
}

void index_cache_fit_of(const struct module_info *module, const struct cache_key *key,
                        size_t line_budget, int inlines, int demangle, struct cache_fit *out)
{
    memcpy(out->builder_id, builder_id, sizeof out->builder_id);
    out->builder_id_length = builder_id_length;
    memcpy(out->build_id, module->build_id, sizeof out->build_id);
    out->build_id_length = module->build_id_length;
    memcpy(out->identity, key->identity, sizeof out->identity);
    out->line_budget = line_budget;
    out->inlines = inlines;
    out->demangle = demangle;
}

int index_cache_takes_unread(const struct stat *status, const struct cache_key *key,
                             const struct cache_fit *fit, unsigned euid)
{
    return index_cache_status_ours(status, euid) &&
           (uint64_t)status->st_mtim.tv_nsec == index_cache_stamp(key->name, 0) &&
           (fit->line_budget == 0 || fit->line_budget >= (uint64_t)status->st_size);
}
