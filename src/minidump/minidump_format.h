/* minidump_format.h: the raw structures of a minidump file, as Breakpad's
 * processor reads them (Breakpad's minidump_format.h and Microsoft's
 * MINIDUMP_* types describe the same bytes). Little-endian, packed where
 * the format packs them; each size is checked below.
 * World: signal-safe (plain data). */
#ifndef EXECINFO_EX_MINIDUMP_FORMAT_H
#define EXECINFO_EX_MINIDUMP_FORMAT_H

#include <stdint.h>

#define MD_HEADER_SIGNATURE 0x504d444du /* "MDMP" */
#define MD_HEADER_VERSION 0x0000a793u

enum md_stream_type {
    MD_THREAD_LIST_STREAM = 3,
    MD_MODULE_LIST_STREAM = 4,
    MD_MEMORY_LIST_STREAM = 5,
    MD_EXCEPTION_STREAM = 6,
    MD_SYSTEM_INFO_STREAM = 7,
    MD_MISC_INFO_STREAM = 15,
    MD_MEMORY_INFO_LIST_STREAM = 16,
    MD_THREAD_NAME_LIST_STREAM = 24,        /* Crashpad's, read by rust-minidump */
    MD_LINUX_CPU_INFO = 0x47670003,         /* /proc/cpuinfo */
    MD_LINUX_PROC_STATUS = 0x47670004,      /* /proc/self/status */
    MD_LINUX_LSB_RELEASE = 0x47670005,      /* /etc/lsb-release */
    MD_LINUX_CMD_LINE = 0x47670006,         /* /proc/self/cmdline */
    MD_LINUX_ENVIRON = 0x47670007,          /* /proc/self/environ */
    MD_LINUX_AUXV = 0x47670008,             /* /proc/self/auxv */
    MD_LINUX_MAPS = 0x47670009,             /* /proc/self/maps */
    MD_LINUX_DSO_DEBUG = 0x4767000a,        /* md_raw_debug64 */
};

#define MD_CPU_ARCHITECTURE_AMD64 9
#define MD_CPU_ARCHITECTURE_ARM64 0x8003 /* Breakpad's MD_CPU_ARCHITECTURE_ARM64_OLD */
#define MD_OS_LINUX 0x8201
#define MD_CVINFOELF_SIGNATURE 0x4270454cu /* "BpEL": an ELF build-id follows */
#define MD_GUID_SIZE 16

struct md_location {
    uint32_t data_size;
    uint32_t rva;
};

struct md_memory_descriptor {
    uint64_t start_of_memory_range;
    struct md_location memory;
};

struct md_raw_header {
    uint32_t signature;
    uint32_t version;
    uint32_t stream_count;
    uint32_t stream_directory_rva;
    uint32_t checksum;
    uint32_t time_date_stamp;
    uint64_t flags;
};

struct md_raw_directory {
    uint32_t stream_type;
    struct md_location location;
};

struct md_raw_thread {
    uint32_t thread_id;
    uint32_t suspend_count;
    uint32_t priority_class;
    uint32_t priority;
    uint64_t teb;
    struct md_memory_descriptor stack;
    struct md_location thread_context;
};

struct md_vs_fixed_file_info {
    uint32_t words[13];
};

/* 108 bytes in the file: the 4 bytes of padding a compiler adds are not
 * written (Breakpad's MD_MODULE_SIZE). */
struct __attribute__((packed)) md_raw_module {
    uint64_t base_of_image;
    uint32_t size_of_image;
    uint32_t checksum;
    uint32_t time_date_stamp;
    uint32_t module_name_rva;
    struct md_vs_fixed_file_info version_info;
    struct md_location cv_record;
    struct md_location misc_record;
    uint32_t reserved0[2];
    uint32_t reserved1[2];
};

struct md_exception {
    uint32_t exception_code;     /* the signal */
    uint32_t exception_flags;    /* its si_code */
    uint64_t exception_record;
    uint64_t exception_address;  /* si_addr */
    uint32_t number_parameters;
    uint32_t align;
    uint64_t exception_information[15];
};

struct md_raw_exception_stream {
    uint32_t thread_id;
    uint32_t align;
    struct md_exception exception_record;
    struct md_location thread_context;
};

struct md_cpu_information_x86 {
    uint32_t vendor_id[3];
    uint32_t version_information;
    uint32_t feature_information;
    uint32_t amd_extended_cpu_features;
};

struct md_raw_system_info {
    uint16_t processor_architecture;
    uint16_t processor_level;
    uint16_t processor_revision;
    uint8_t number_of_processors;
    uint8_t product_type;
    uint32_t major_version;
    uint32_t minor_version;
    uint32_t build_number;
    uint32_t platform_id;
    uint32_t csd_version_rva;    /* an md_string: "Linux RELEASE VERSION MACHINE" */
    uint16_t suite_mask;
    uint16_t reserved2;
    union {
        struct md_cpu_information_x86 x86;
        uint64_t processor_features[2];
    } cpu;
};

/* MINIDUMP_MISC_INFO, the first version: the process id. */
#define MD_MISCINFO_FLAGS1_PROCESS_ID 0x1u
struct md_raw_misc_info {
    uint32_t size_of_info;
    uint32_t flags1;
    uint32_t process_id;
    uint32_t process_create_time;
    uint32_t process_user_time;
    uint32_t process_kernel_time;
};

/* MINIDUMP_MEMORY_INFO_LIST: every mapping with its protection, as
 * Crashpad writes it from /proc/self/maps. */
struct md_raw_memory_info_list {
    uint32_t size_of_header;
    uint32_t size_of_entry;
    uint64_t number_of_entries;
};

#define MD_MEMORY_STATE_COMMIT 0x1000u
#define MD_MEMORY_TYPE_PRIVATE 0x20000u
#define MD_MEMORY_TYPE_MAPPED 0x40000u
#define MD_MEMORY_PROTECT_NOACCESS 0x01u
#define MD_MEMORY_PROTECT_READONLY 0x02u
#define MD_MEMORY_PROTECT_READWRITE 0x04u
#define MD_MEMORY_PROTECT_WRITECOPY 0x08u
#define MD_MEMORY_PROTECT_EXECUTE 0x10u
#define MD_MEMORY_PROTECT_EXECUTE_READ 0x20u
#define MD_MEMORY_PROTECT_EXECUTE_READWRITE 0x40u
#define MD_MEMORY_PROTECT_EXECUTE_WRITECOPY 0x80u

struct md_raw_memory_info {
    uint64_t base_address;
    uint64_t allocation_base;
    uint32_t allocation_protection;
    uint32_t alignment1;
    uint64_t region_size;
    uint32_t state;
    uint32_t protection;
    uint32_t type;
    uint32_t alignment2;
};

/* MINIDUMP_THREAD_NAME: packed to 4, as Crashpad writes it. */
struct __attribute__((packed, aligned(4))) md_raw_thread_name {
    uint32_t thread_id;
    uint64_t thread_name_rva;    /* an md_string */
};

struct md_raw_link_map64 {
    uint64_t addr;
    uint32_t name;               /* rva of an md_string */
    uint64_t ld;
};

struct md_raw_debug64 {
    uint32_t version;
    uint32_t map;                /* rva of dso_count md_raw_link_map64 */
    uint32_t dso_count;
    uint64_t brk;
    uint64_t ldbase;
    uint64_t dynamic;            /* the dynamic section's bytes follow the struct */
};

_Static_assert(sizeof(struct md_raw_header) == 32, "MDRawHeader");
_Static_assert(sizeof(struct md_raw_directory) == 12, "MDRawDirectory");
_Static_assert(sizeof(struct md_memory_descriptor) == 16, "MDMemoryDescriptor");
_Static_assert(sizeof(struct md_raw_thread) == 48, "MDRawThread");
_Static_assert(sizeof(struct md_raw_module) == 108, "MD_MODULE_SIZE");
_Static_assert(sizeof(struct md_raw_exception_stream) == 168, "MDRawExceptionStream");
_Static_assert(sizeof(struct md_raw_system_info) == 56, "MDRawSystemInfo");
_Static_assert(sizeof(struct md_raw_misc_info) == 24, "MDRawMiscInfo");
_Static_assert(sizeof(struct md_raw_memory_info_list) == 16, "MDRawMemoryInfoList");
_Static_assert(sizeof(struct md_raw_memory_info) == 48, "MDRawMemoryInfo");
_Static_assert(sizeof(struct md_raw_thread_name) == 12, "MDRawThreadName");
_Static_assert(sizeof(struct md_raw_link_map64) == 24, "MDRawLinkMap64");
_Static_assert(sizeof(struct md_raw_debug64) == 40, "MDRawDebug64");

#endif
