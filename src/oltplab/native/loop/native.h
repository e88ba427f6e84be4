/*
 * oltplab._native: the virtual users' hot path in C. What the parts share.
 *
 * workload.h  what the loop knows of a workload; workloads.c: the compiled ones (one folder
 *             each, beside loop/)
 * pq.c        the libpq functions, from the very library psycopg loaded
 * procloop.c  ProcLoop: a worker's users over epoll, without the GIL, whatever the transport
 * procloop_type.c  the Python type around that loop (procloop.h: what the two share)
 * pqloop.c    ProcLoop's libpq transport
 * mariadb.c   libmariadb, opened at run time, and MariaDBConnection (mariadb.h)
 * myloop.c    MariaDBLoop: ProcLoop's libmariadb transport (procedures mode, --mode sql)
 * module.c    the module and its constants
 * text.c      text the workloads write, bounds checked: appends, int[] text, tuples of str
 */
#ifndef OLTPLAB_NATIVE_H
#define OLTPLAB_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Random numbers: xoshiro256** seeded by splitmix64                                          */

typedef struct {
    uint64_t s[4];
} rng_t;

static inline uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rng_seed(rng_t *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* uniform on [0, 1) with 53 random bits */
static inline double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* uniform on [lo, hi]: the high word of a 64x64-bit product, uniform to within
 * (hi - lo + 1) / 2^64 */
static inline int64_t uniform(rng_t *r, int64_t lo, int64_t hi) {
    uint64_t n = (uint64_t)(hi - lo + 1);
    return lo + (int64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* ------------------------------------------------------------------------------------------ */
/* libpq, as loaded by psycopg                                                                */

typedef void PGconn;
typedef void PGresult;
enum { CONNECTION_OK = 0 };
enum { PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2 };
#define PG_DIAG_SQLSTATE 'C'
#define PG_DIAG_MESSAGE_PRIMARY 'M'

struct pq_api {
    int loaded;
    int (*sendQueryPrepared)(PGconn *, const char *, int, const char *const *, const int *,
                             const int *, int);
    int (*sendQuery)(PGconn *, const char *);
    int (*flush)(PGconn *);
    int (*consumeInput)(PGconn *);
    int (*isBusy)(PGconn *);
    PGresult *(*getResult)(PGconn *);
    int (*resultStatus)(const PGresult *);
    int (*ntuples)(const PGresult *);
    int (*nfields)(const PGresult *);
    int (*getisnull)(const PGresult *, int, int);
    char *(*getvalue)(const PGresult *, int, int);
    char *(*resultErrorField)(const PGresult *, int);
    void (*clear)(PGresult *);
    int (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    int (*socket)(const PGconn *);
    int (*enterPipelineMode)(PGconn *); /* libpq >= 14 */
    int (*exitPipelineMode)(PGconn *);
    int (*pipelineSync)(PGconn *);
    char *(*cmdTuples)(PGresult *);
};
extern struct pq_api pq;
int load_libpq(const char *path);
int pq_has_pipeline(void);

/* ------------------------------------------------------------------------------------------ */
/* ProcLoop                                                                                   */

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* Python's time.monotonic_ns() */
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

enum { EV_BOUNDARY = 0, EV_FINISHED = 1, EV_SAMPLES = 2, EV_FAILED = 3, EV_STOPPED = 4,
       EV_LOST = 5, EV_WOKEN = 6 };
extern PyTypeObject ProcLoopType;

#endif
