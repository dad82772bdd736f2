/* Prints, one "name microseconds" line each, every clock reading the time shim interposes or
 * must leave alone, read from the main thread and from a second thread; the tests run it with
 * and without the shim preloaded and compare with their own clocks. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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

int main(void) {
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
