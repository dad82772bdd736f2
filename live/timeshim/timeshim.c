/* lockstep's time shim: an LD_PRELOAD library that moves a process's wall clock as the control
 * file (control.h) says, and leaves every other clock alone.
 *
 * Interposed: clock_gettime for CLOCK_REALTIME and CLOCK_REALTIME_COARSE, gettimeofday, time
 * and timespec_get(TIME_UTC); every other clock id passes through unchanged. redis-server reads
 * its wall clock only through these (ustime()/mstime() use gettimeofday; TIME, key expiry,
 * PTTL and the scripts' view of time follow from them), and its monotonic clock through
 * CLOCK_MONOTONIC, which stays real.
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, whose first malloc (in a library
 * constructor, before main) calls clock_gettime; libfaketime's clock_gettime then initialises
 * itself with dlsym, a failing dlsym mallocs an error message, and jemalloc deadlocks on its
 * own init lock (libfaketime issues #130 and #478; reproduced with 0.9.10, see the live docs).
 * So this shim never calls dlsym and never allocates:
 *  - the real clock is the kernel's vDSO clock_gettime, found by reading the vDSO's ELF symbol
 *    table at the address getauxval(AT_SYSINFO_EHDR) gives (plain memory reads of a mapping
 *    the kernel made before the process started), with the raw clock_gettime system call as
 *    the fallback when the vDSO or the symbol is missing;
 *  - the control file is opened and mapped with plain system calls, at the first clock read
 *    and then at most every 100 ms (monotonic) until it exists, so that a process started
 *    before its control file reads plain time meanwhile;
 *  - readers take no lock: the writer updates the schedule under a sequence lock (control.h).
 * The library is linked with -z now, so that no lazy PLT resolution happens inside a clock
 * call either. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "control.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

enum {
  kNsPerSec = 1000000000,
  kPathMax = 4096,
  kSeqlockSpins = 100,        /* Tries before a reader starts yielding the CPU to the writer. */
  kSeqlockAttempts = 100000, /* Tries in all (yields take 1 us or more each). */
  kAttachWaits = 100000,     /* Yields while another thread maps the control file. */
};
static const int64_t kAttachRetryNs = 100 * 1000 * 1000;

/* ---- the real clock ------------------------------------------------------------------------ */

typedef int (*clock_gettime_fn)(clockid_t, struct timespec*);

/* The vDSO's name for clock_gettime (the kernel's Documentation/ABI/stable/vdso). */
#if defined(__aarch64__)
static const char kVdsoClockGettime[] = "__kernel_clock_gettime";
#else
static const char kVdsoClockGettime[] = "__vdso_clock_gettime";
#endif

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Counts the symbols of a DT_GNU_HASH table: one past the highest index any chain reaches. */
static uint32_t gnu_hash_symbol_count(const uint32_t* table) {
  const uint32_t nbuckets = table[0], symoffset = table[1], bloom_size = table[2];
  const uint32_t* buckets = table + 4 + bloom_size * (sizeof(uint64_t) / sizeof(uint32_t));
  const uint32_t* chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) {
    if (buckets[b] > last) last = buckets[b];
  }
  if (last < symoffset) return symoffset;
  while ((chain[last - symoffset] & 1) == 0) ++last;
  return last + 1;
}

/* The vDSO's clock_gettime, or NULL. */
static clock_gettime_fn find_vdso_clock_gettime(void) {
  const uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  if (base == 0) return NULL;
  const Elf64_Ehdr* ehdr = (const Elf64_Ehdr*)base;
  if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64) {
    return NULL;
  }
  const Elf64_Phdr* phdr = (const Elf64_Phdr*)(base + ehdr->e_phoff);
  uintptr_t bias = 0;
  bool have_load = false;
  const Elf64_Dyn* dynamic = NULL;
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdr[i].p_type == PT_LOAD && !have_load) {
      bias = base + phdr[i].p_offset - phdr[i].p_vaddr;
      have_load = true;
    } else if (phdr[i].p_type == PT_DYNAMIC) {
      dynamic = (const Elf64_Dyn*)(base + phdr[i].p_offset);
    }
  }
  if (!have_load || dynamic == NULL) return NULL;
  const Elf64_Sym* symtab = NULL;
  const char* strtab = NULL;
  const uint32_t* hash = NULL;
  const uint32_t* gnu_hash = NULL;
  for (const Elf64_Dyn* d = dynamic; d->d_tag != DT_NULL; ++d) {
    const uintptr_t at = bias + d->d_un.d_ptr;
    if (d->d_tag == DT_SYMTAB) symtab = (const Elf64_Sym*)at;
    if (d->d_tag == DT_STRTAB) strtab = (const char*)at;
    if (d->d_tag == DT_HASH) hash = (const uint32_t*)at;
    if (d->d_tag == DT_GNU_HASH) gnu_hash = (const uint32_t*)at;
  }
  if (symtab == NULL || strtab == NULL || (hash == NULL && gnu_hash == NULL)) return NULL;
  const uint32_t count = hash != NULL ? hash[1] : gnu_hash_symbol_count(gnu_hash);
  for (uint32_t i = 0; i < count; ++i) {
    const Elf64_Sym* sym = &symtab[i];
    if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || sym->st_shndx == SHN_UNDEF) continue;
    if (strcmp(strtab + sym->st_name, kVdsoClockGettime) == 0) {
      return (clock_gettime_fn)(bias + sym->st_value);
    }
  }
  return NULL;
}

static clock_gettime_fn g_vdso_clock_gettime;
static int g_vdso_state; /* 0: not looked up yet; 1: looked up (g_vdso_clock_gettime may be NULL). */

/* The kernel's reading of `clock`, as glibc's clock_gettime returns it (errno on failure). */
static int real_clock_gettime(clockid_t clock, struct timespec* ts) {
  clock_gettime_fn fn;
  if (__atomic_load_n(&g_vdso_state, __ATOMIC_ACQUIRE) == 1) {
    fn = __atomic_load_n(&g_vdso_clock_gettime, __ATOMIC_RELAXED);
  } else {
    /* Two threads may both look it up; they find the same address. */
    fn = find_vdso_clock_gettime();
    __atomic_store_n(&g_vdso_clock_gettime, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&g_vdso_state, 1, __ATOMIC_RELEASE);
  }
  if (fn != NULL) {
    /* The vDSO returns 0 or a negated errno, as the system call does. */
    const int rc = fn(clock, ts);
    if (rc == 0) return 0;
    errno = -rc;
    return -1;
  }
  return (int)syscall(SYS_clock_gettime, clock, ts);
}

static int64_t real_monotonic_ns(void) {
  struct timespec ts;
  if (real_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * kNsPerSec + ts.tv_nsec;
}

/* ---- the control file ---------------------------------------------------------------------- */

static struct lockstep_timeshim_control* g_control; /* Set once, when mapped. */
static int g_attach_busy;                           /* A thread is trying to map the file. */
static int g_attach_disabled;                       /* No control file path in the environment. */
static int64_t g_next_attach_ns;                    /* Monotonic time of the next try. */
static char g_path[kPathMax];                       /* Copied from the environment once. */
static int g_path_read;

/* Maps the control file if it exists and is whole. Called by one thread at a time. */
static struct lockstep_timeshim_control* map_control(void) {
  if (!g_path_read) {
    /* The first clock read comes before main (jemalloc's first malloc), while the environment
     * is still the one exec gave us; redis-server rewrites it later for its process title. */
    g_path_read = 1;
    const char* path = getenv(LOCKSTEP_TIMESHIM_ENV);
    const size_t len = path != NULL ? strlen(path) : 0;
    if (len == 0 || len >= sizeof(g_path)) {
      __atomic_store_n(&g_attach_disabled, 1, __ATOMIC_RELAXED);
      return NULL;
    }
    memcpy(g_path, path, len + 1);
  }
  const int fd = (int)syscall(SYS_openat, AT_FDCWD, g_path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void* mem = MAP_FAILED;
  const size_t size = sizeof(struct lockstep_timeshim_control);
  if (syscall(SYS_fstat, fd, &st) == 0 && (size_t)st.st_size >= size) {
    mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  syscall(SYS_close, fd);
  if (mem == MAP_FAILED) return NULL;
  struct lockstep_timeshim_control* control = mem;
  if (__atomic_load_n(&control->magic, __ATOMIC_ACQUIRE) != LOCKSTEP_TIMESHIM_MAGIC ||
      __atomic_load_n(&control->size, __ATOMIC_RELAXED) != size) {
    munmap(mem, size);
    return NULL;
  }
  __atomic_fetch_add(&control->attached, 1, __ATOMIC_RELAXED);
  return control;
}

/* The mapped control file, or NULL while there is none (then the clock reads plain time). */
static struct lockstep_timeshim_control* control(void) {
  struct lockstep_timeshim_control* c = __atomic_load_n(&g_control, __ATOMIC_ACQUIRE);
  if (c != NULL || __atomic_load_n(&g_attach_disabled, __ATOMIC_RELAXED)) return c;
  for (int waited = 0;; ++waited) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&g_attach_busy, &expected, 1, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      break;
    }
    /* Another thread is mapping the file (a few system calls): wait for it, or this thread
     * would read plain time while that one reads the schedule. Bounded, for a child forked
     * while a thread of its parent was mapping (the flag stays set in the child). */
    if (waited == kAttachWaits) return NULL;
    syscall(SYS_sched_yield);
    c = __atomic_load_n(&g_control, __ATOMIC_ACQUIRE);
    if (c != NULL) return c;
  }
  const int64_t now_ns = real_monotonic_ns();
  if (now_ns >= g_next_attach_ns) {
    g_next_attach_ns = now_ns + kAttachRetryNs;
    c = map_control();
    if (c != NULL) __atomic_store_n(&g_control, c, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&g_attach_busy, 0, __ATOMIC_RELEASE);
  return c;
}

/* The wall clock for real time real_ns, per the control file's schedule. False when there is
 * no stable schedule to read after kSeqlockAttempts tries, the last ones yielding the CPU (a
 * writer that died mid-update): the caller keeps real time. */
static bool wall_from_control(const struct lockstep_timeshim_control* c, int64_t real_ns,
                              int64_t* wall_ns) {
  for (int attempt = 0; attempt < kSeqlockAttempts; ++attempt) {
    const uint64_t seq_before = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
    if (seq_before & 1) {
      if (attempt < kSeqlockSpins) {
        cpu_relax();
      } else {
        syscall(SYS_sched_yield);
      }
      continue;
    }
    uint64_t count = __atomic_load_n(&c->segment_count, __ATOMIC_RELAXED);
    if (count > LOCKSTEP_TIMESHIM_MAX_SEGMENTS) count = LOCKSTEP_TIMESHIM_MAX_SEGMENTS;
    int64_t start = 0, offset = 0, drift_ppb = 0;
    /* The last segment that has started; the first one also covers earlier times. */
    for (uint64_t i = count; i-- > 0;) {
      const struct lockstep_timeshim_segment* s = &c->segments[i];
      start = __atomic_load_n(&s->start_real_ns, __ATOMIC_RELAXED);
      if (start <= real_ns || i == 0) {
        offset = __atomic_load_n(&s->offset_ns, __ATOMIC_RELAXED);
        drift_ppb = __atomic_load_n(&s->drift_ppb, __ATOMIC_RELAXED);
        break;
      }
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) != seq_before) {
      if (attempt >= kSeqlockSpins) syscall(SYS_sched_yield);
      continue;
    }
    if (count == 0) return false;
    /* 128 bits: an hour is 3.6e12 ns, times a drift of up to 1e9 ppb overflows 64. */
    const __int128 drift_ns = (__int128)(real_ns - start) * drift_ppb / kNsPerSec;
    *wall_ns = real_ns + offset + (int64_t)drift_ns;
    return true;
  }
  return false;
}

/* Replaces a real CLOCK_REALTIME(_COARSE) reading with the node's wall clock reading. */
static void to_wall(struct timespec* ts) {
  const struct lockstep_timeshim_control* c = control();
  if (c == NULL) return;
  const int64_t real_ns = (int64_t)ts->tv_sec * kNsPerSec + ts->tv_nsec;
  int64_t wall_ns;
  if (!wall_from_control(c, real_ns, &wall_ns)) return;
  int64_t sec = wall_ns / kNsPerSec, nsec = wall_ns % kNsPerSec;
  if (nsec < 0) {
    nsec += kNsPerSec;
    sec -= 1;
  }
  ts->tv_sec = (time_t)sec;
  ts->tv_nsec = (long)nsec;
}

/* ---- the interposed functions -------------------------------------------------------------- */

SHIM_EXPORT int clock_gettime(clockid_t clock, struct timespec* ts) {
  const int rc = real_clock_gettime(clock, ts);
  if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) to_wall(ts);
  return rc;
}

SHIM_EXPORT int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  /* The time zone argument is obsolete; the kernel still fills it. */
  if (tz != NULL && syscall(SYS_gettimeofday, NULL, tz) != 0) return -1;
  /* No check of tv for NULL: glibc declares it nonnull, so the compiler would drop it. */
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

SHIM_EXPORT time_t time(time_t* out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}

SHIM_EXPORT int timespec_get(struct timespec* ts, int base) {
  if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) != 0) return 0;
  return base;
}
