/* Prints, one "name microseconds" line each, every clock reading the time shim interposes or
 * must leave alone, read from the main thread and from a second thread; the tests run it with
 * and without the shim preloaded and compare with their own clocks.
 *
 * `timeshim_probe stress MS`: two threads read the (shimmed) CLOCK_REALTIME against the real
 * one (the raw system call) for MS milliseconds, and it prints "offset SECONDS COUNT" for every
 * offset, rounded to whole seconds, that they saw: the test rewrites the schedule meanwhile,
 * and a torn read would show an offset that no schedule gives. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/time.h>
#include <time.h>

static long long us_of(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return -1;
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long thread_realtime_us;

static void* read_in_thread(void* unused) {
  (void)unused;
  thread_realtime_us = us_of(CLOCK_REALTIME);
  return NULL;
}

enum { kOffsetRange = 1000 }; /* Counted offsets: -1000..1000 s; beyond, in the last slot. */
static unsigned long long offset_counts[2][2 * kOffsetRange + 2];
static long stress_ms;

static long long raw_realtime_ns(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void* stress(void* slot) {
  unsigned long long* counts = offset_counts[(long)slot];
  const long long end_us = us_of(CLOCK_MONOTONIC) + stress_ms * 1000;
  while (us_of(CLOCK_MONOTONIC) < end_us) {
    struct timespec ts;
    const long long real_ns = raw_realtime_ns();
    clock_gettime(CLOCK_REALTIME, &ts);
    const long long wall_ns = (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
    const long long diff_ns = wall_ns - real_ns;
    const long long offset_s = (diff_ns + (diff_ns >= 0 ? 500000000 : -500000000)) / 1000000000;
    const long long index = offset_s < -kOffsetRange || offset_s > kOffsetRange
                                ? 2 * kOffsetRange + 1
                                : offset_s + kOffsetRange;
    ++counts[index];
  }
  return NULL;
}

static int run_stress(void) {
  pthread_t threads[2];
  for (long i = 0; i < 2; ++i) {
    if (pthread_create(&threads[i], NULL, stress, (void*)i) != 0) return 1;
  }
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  for (int k = 0; k < 2 * kOffsetRange + 2; ++k) {
    const unsigned long long n = offset_counts[0][k] + offset_counts[1][k];
    if (n == 0) continue;
    if (k == 2 * kOffsetRange + 1) {
      printf("offset out_of_range %llu\n", n);
    } else {
      printf("offset %d %llu\n", k - kOffsetRange, n);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "stress") == 0) {
    stress_ms = atol(argv[2]);
    return run_stress();
  }
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct timespec utc;
  timespec_get(&utc, TIME_UTC);
  pthread_t thread;
  if (pthread_create(&thread, NULL, read_in_thread, NULL) != 0) return 1;
  pthread_join(thread, NULL);
  printf("realtime %lld\n", us_of(CLOCK_REALTIME));
  printf("realtime_coarse %lld\n", us_of(CLOCK_REALTIME_COARSE));
  printf("gettimeofday %lld\n", (long long)tv.tv_sec * 1000000 + tv.tv_usec);
  printf("time %lld\n", (long long)time(NULL) * 1000000);
  printf("timespec_get %lld\n", (long long)utc.tv_sec * 1000000 + utc.tv_nsec / 1000);
  printf("thread_realtime %lld\n", thread_realtime_us);
  printf("monotonic %lld\n", us_of(CLOCK_MONOTONIC));
  printf("monotonic_raw %lld\n", us_of(CLOCK_MONOTONIC_RAW));
  printf("boottime %lld\n", us_of(CLOCK_BOOTTIME));
  return 0;
}
