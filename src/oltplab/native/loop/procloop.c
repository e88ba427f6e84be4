/*
 * ProcLoop: every user of one worker process on one thread, with the GIL released. Each
 *   user owns a connection its transport drives over epoll: libpq's asynchronous calls
 *   (pqloop.c: in procedures mode one call of a PL/pgSQL function per transaction, in --mode
 *   sql the type's statements as a few pipelined round trips, sqlloop.c) or libmariadb's
 *   non-blocking ones (myloop.c: one CALL of a stored procedure and the SELECT of its OUT
 *   parameter per round trip). The client's cost per round trip then is what the client
 *   library and the kernel take, with no interpreter work per transaction.
 *
 * This file is the users' logic, whatever the transport and the workload (workload.h): the
 * cycle of a terminal (draw, keying time, the transaction, think time), retries
 * of the retryable errors, the consecutive-error limit, the boundaries of the measured window
 * (with the transport's statistics flush, when it has one), and what counts in the window,
 * the rules engines/common/recorder.py describes. ProcLoop.run() returns to Python at every event Python
 * must act on: all users crossed the ramp-up boundary, all finished, response-time buffers
 * to drain, a failure, or a stop; in resilient mode (--inject) also users whose connection
 * was lost (LOST) and a wake-up asked by Python (WOKEN), which then hands the lost users
 * their new connections (replace). After hold(), a user that crosses ramp_end waits there
 * until go() (which wakes the loop: WOKEN), so that none begins the window before the
 * manager has read the server's counters at its start.
 */
#include "procloop.h"

void loop_fail(ProcLoop *L, const char *fmt, const char *what, const char *detail) {
    if (L->failed) return;
    L->failed = 1;
    snprintf(L->error, sizeof L->error, fmt, what, detail);
}

/* The first line of a client library's message, without trailing blanks: errors are one
 * line. */
void first_line(char *s) {
    char *nl = strchr(s, '\n');
    if (nl) *nl = 0;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
}

static void rec_failed(ProcLoop *L, int kind, int64_t start, int64_t end, int retries);

/* Resilient mode (--inject): the user alone is lost. Its transaction in flight counts as an
 * error of its kind, its socket leaves the event loop (libpq may have closed it already: then
 * the kernel did), and run() returns LOST so that Python opens another connection and hands
 * it over (replace). A user done with the window only leaves the loop. */
void user_lose(ProcLoop *L, User *u) {
    if (u->state == S_LOST) return;
    L->tp->forget(L, u, 0);
    if (u->fd >= 0) epoll_ctl(L->epfd, EPOLL_CTL_DEL, u->fd, NULL); /* ENOENT if closed: fine */
    u->fd = -1;
    u->events = 0;
    if (u->state == S_DONE) return;
    if (u->inflight) {
        rec_failed(L, u->kind, u->start, now_ns(), u->retries);
        u->inflight = 0;
    }
    if (u->state == S_SLEEP) L->sleeping--;
    if (u->state == S_HELD) L->held--;
    u->state = S_LOST;
    L->lost_total++;
    if (L->nlost < L->n) L->lost[L->nlost++] = (int)(u - L->users); /* once per loss: fits */
}

/* The connection is gone: the run fails with the client library's message, or the user is
 * lost. */
void user_lost(ProcLoop *L, User *u, const char *what, const char *message) {
    if (L->resilient) {
        user_lose(L, u);
        return;
    }
    char msg[384];
    snprintf(msg, sizeof msg, "%s", message ? message : "");
    first_line(msg);
    loop_fail(L, "%s: lost the database connection (%s)", what, msg);
}

/* One response time of a row (a kind, or the unit) in the window: 0, or -1 when its buffer
 * is full (never: the loop hands over a full buffer before any user goes on). */
static int rec_sample(ProcLoop *L, int row, int64_t us) {
    if (L->nsamples[row] >= L->bulk) {
        loop_fail(L, "%s: %s", workload_row_name(L->wl, row),
                  "response-time buffer overflow (a bug)");
        return -1;
    }
    L->samples[row][L->nsamples[row]++] = us;
    return 0;
}

/* Count a completed transaction: the workload says what it was (DONE_ bits) and adds its
 * inputs when it lies in the measured window. A call that ends a unit (DONE_UNIT) records the
 * unit row too, under the call's window: committed or rolled back as the call, with the
 * unit's response time (its retries and errors stay with its calls' rows). */
/* A unit begun in the window ended: the live figures Python reads while the loop runs. */
static void live_unit(ProcLoop *L, int done, int64_t unit_us) {
    int64_t k = L->live_next; /* only the loop's thread writes: Python reads */
    __atomic_store_n(&L->live_recent[k % LIVE_RECENT], unit_us, __ATOMIC_RELAXED);
    __atomic_store_n(&L->live_next, k + 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&L->live_unit_us, unit_us, __ATOMIC_RELAXED);
    if (done & DONE_ROLLED_BACK) __atomic_fetch_add(&L->live_rolled_back, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&L->live_units, 1, __ATOMIC_RELEASE);
}

static void rec_done(ProcLoop *L, User *u, int64_t end, int has, long long value) {
    int kind = u->kind, window = u->start >= L->ramp_end && end <= L->stop_at;
    int64_t us = (end - u->start) / 1000, unit_us = 0;
    int done = L->wl->completed(u->drawn, has, value, us, window ? L->inputs : NULL, &unit_us);
    __atomic_fetch_add(&L->completed, 1, __ATOMIC_RELAXED);
    if (done & DONE_HEADLINE) __atomic_fetch_add(&L->headline, 1, __ATOMIC_RELAXED);
    if (L->wl->unit && (done & DONE_UNIT) && u->start >= L->ramp_end) live_unit(L, done, unit_us);
    if (!window) return;
    int rows[2] = {kind, L->wl->nkinds}, nrows = L->wl->unit && (done & DONE_UNIT) ? 2 : 1;
    int64_t took[2] = {us, unit_us};
    L->retries[kind] += u->retries;
    for (int i = 0; i < nrows; i++) {
        int row = rows[i];
        if (done & DONE_ROLLED_BACK)
            L->rolled_back[row]++;
        else
            L->committed[row]++;
        L->total_us[row] += took[i];
        if (rec_sample(L, row, took[i]) < 0) return;
    }
}

static void rec_failed(ProcLoop *L, int kind, int64_t start, int64_t end, int retries) {
    if (start >= L->ramp_end && end <= L->stop_at) {
        L->errors[kind]++;
        L->retries[kind] += retries;
    }
}

/* A transaction ended: the backend may hold its counts until the next flush. (It publishes
 * them by itself when a transaction ends a second after its last publication, but the client
 * cannot tell from its own clock when that was: under load the two clocks of one commit differ
 * by more than any margin. Only a 10 s idle publication is certain.) */
static void note_end(ProcLoop *L, User *u, int64_t end) {
    u->pending = 1;
    u->last_end = end;
}

static void cycle(ProcLoop *L, User *u);
static void submit(ProcLoop *L, User *u);
static void go_on(ProcLoop *L, User *u);

static void sleep_for(ProcLoop *L, User *u, double seconds, int then) {
    u->wake = now_ns() + (int64_t)(seconds * 1e9);
    u->after_sleep = then;
    u->state = S_SLEEP;
    L->sleeping++;
}

/* Watch ``events`` on the user's socket (its answer, and room to write while the client
 * library holds output back). */
int user_watch(ProcLoop *L, User *u, uint32_t events) {
    if (u->events == events) return 0;
    struct epoll_event ev = {.events = events, .data.u32 = (uint32_t)(u - L->users)};
    if (epoll_ctl(L->epfd, EPOLL_CTL_MOD, u->fd, &ev) < 0) {
        loop_fail(L, "%s: %s", "event loop", strerror(errno));
        return -1;
    }
    u->events = events;
    return 0;
}

void user_crossed(ProcLoop *L, User *u, int64_t flushed_ns) {
    int last = u->next >= L->stop_at;
    if (flushed_ns >= 0 && L->ncross_ns[last] < L->n) /* a user crosses each boundary once */
        L->cross_ns[last][L->ncross_ns[last]++] = flushed_ns;
    L->crossed[last]++;
    if (last) {
        u->state = S_DONE;
        return;
    }
    u->next = L->stop_at;
    if (L->hold_ramp && !__atomic_load_n(&L->go, __ATOMIC_ACQUIRE)) {
        u->state = S_HELD;
        L->held++;
        return;
    }
    go_on(L, u);
}

/* After the ramp-up boundary: on to what the crossing interrupted. */
static void go_on(ProcLoop *L, User *u) {
    if (u->after_cross == THEN_SUBMIT) {
        submit(L, u);
    } else { /* back to the wait it was in */
        u->state = S_SLEEP;
        L->sleeping++;
    }
}

/* go() came: the held users go on. */
static void release_held(ProcLoop *L) {
    for (int i = 0; i < L->n && L->held && !L->failed; i++) {
        User *u = &L->users[i];
        if (u->state != S_HELD) continue;
        u->state = S_READY;
        L->held--;
        go_on(L, u);
    }
}

/* Cross the next boundary, first asking the backend to publish its counts if some may be
 * pending and it will not publish them by itself soon. */
static void cross(ProcLoop *L, User *u, int then) {
    u->after_cross = then;
    if (L->tp->flush && L->flush_stats && u->pending &&
        now_ns() - u->last_end < L->idle_published_after) {
        L->tp->flush(L, u);
        return;
    }
    user_crossed(L, u, -1);
}

static void send_txn(ProcLoop *L, User *u) {
    u->inflight = 1;
    u->state = S_TXN;
    L->tp->send(L, u);
}

static void submit(ProcLoop *L, User *u) {
    int64_t t = now_ns();
    if (t >= u->next) {
        cross(L, u, THEN_SUBMIT);
        return;
    }
    u->start = t;
    send_txn(L, u);
}

/* Draw the next transaction and its inputs, which a retry keeps; wait the keying time if
 * asked. */
static void cycle(ProcLoop *L, User *u) {
    int kind = L->wl->draw(u->term, u->drawn);
    if (kind == KIND_WAIT && L->wl->idle) { /* nothing due: draw again after the wait */
        double s = L->wl->idle(u->term);
        sleep_for(L, u, s > 0 ? s : 0, THEN_CYCLE);
        return;
    }
    if (kind < 0 || kind >= L->wl->nkinds) {
        loop_fail(L, "%s: %s", L->wl->name, "a terminal drew no transaction kind (a bug)");
        return;
    }
    u->kind = kind;
    if (L->tp->prepare(L, u) < 0) {
        loop_fail(L, "%s: %s", L->wl->kinds[kind], "an argument is too long for its buffer");
        return;
    }
    u->retries = 0;
    if (L->waits)
        sleep_for(L, u, L->wl->keying(u->term, kind), THEN_SUBMIT);
    else
        submit(L, u);
}

/* A waiting user's timer: cross a boundary on the way, or wake. */
static void tick(ProcLoop *L, User *u, int64_t t) {
    if (t >= u->next) {
        u->state = S_READY;
        L->sleeping--;
        cross(L, u, THEN_SLEEP);
        return;
    }
    if (u->wake <= t) {
        u->state = S_READY;
        L->sleeping--;
        if (u->after_sleep == THEN_SUBMIT)
            submit(L, u);
        else
            cycle(L, u);
    }
}

/* The transaction's answer is in (the transport classified it): count it, retry it, or fail;
 * ``message`` is the server's, for the failures. */
void txn_end(ProcLoop *L, User *u, int outcome, int has, long long value, const char *message) {
    int64_t end = now_ns();
    note_end(L, u, end);
    if (outcome == OUT_RETRY) {
        if (u->retries < L->max_retries) {
            u->retries++;
            send_txn(L, u);
            return;
        }
        outcome = OUT_ERROR; /* retried enough: an error of its type */
    }
    switch (outcome) {
    case OUT_DONE:
        u->errors = 0;
        rec_done(L, u, end, has, value);
        break;
    case OUT_LOST:
        user_lost(L, u, L->wl->kinds[u->kind], message);
        return;
    case OUT_FATAL:
        loop_fail(L, "%s: %s", L->wl->kinds[u->kind], message);
        return;
    default: {
        rec_failed(L, u->kind, u->start, end, u->retries);
        if (++u->errors >= L->max_errors) {
            char msg[400];
            snprintf(msg, sizeof msg, "keeps failing: %s", message);
            loop_fail(L, "%s: %s", L->wl->kinds[u->kind], msg);
            return;
        }
    }
    }
    u->inflight = 0;
    if (L->waits)
        sleep_for(L, u, L->wl->think(u->term, u->kind), THEN_CYCLE);
    else
        cycle(L, u);
}

static int samples_full(ProcLoop *L) {
    for (int k = 0, rows = workload_rows(L->wl); k < rows; k++)
        if (L->nsamples[k] >= L->bulk) return 1;
    return 0;
}

/* The loop itself, without the GIL: returns one of the EV_ codes. */
int loop_run(ProcLoop *L) {
    enum { MAX_EVENTS = 64 };
    struct epoll_event events[MAX_EVENTS];
    if (!L->started) {
        L->started = 1;
        for (int i = 0; i < L->n && !L->failed; i++) cycle(L, &L->users[i]);
    }
    for (int i = 0; i < L->n && !L->failed; i++) { /* users back on a new connection */
        User *u = &L->users[i];
        if (u->state != S_RESUME) continue;
        u->state = S_READY;
        cycle(L, u);
    }
    for (;;) {
        if (L->failed) return EV_FAILED;
        if (L->nlost) return EV_LOST;
        if (L->held && __atomic_load_n(&L->go, __ATOMIC_ACQUIRE)) {
            release_held(L);
            continue;
        }
        if (L->crossed[0] == L->n && !L->boundary_told) {
            L->boundary_told = 1;
            return EV_BOUNDARY;
        }
        if (L->crossed[1] == L->n) return EV_FINISHED;
        if (samples_full(L)) return EV_SAMPLES;
        int timeout = -1;
        if (L->sleeping) {
            int64_t t = now_ns(), due = INT64_MAX;
            for (int i = 0; i < L->n; i++) {
                User *u = &L->users[i];
                if (u->state != S_SLEEP) continue;
                int64_t d = u->wake < u->next ? u->wake : u->next;
                if (d < due) due = d;
            }
            int64_t ms = due <= t ? 0 : (due - t + 999999) / 1000000;
            timeout = ms > 1000 ? 1000 : (int)ms;
        }
        int got = epoll_wait(L->epfd, events, MAX_EVENTS, timeout);
        if (got < 0) {
            if (errno == EINTR) continue;
            loop_fail(L, "%s: %s", "event loop", strerror(errno));
            return EV_FAILED;
        }
        /* One readable user completes at most one transaction: checking for a full buffer
         * before each keeps every append within bulk. Events not handled now are reported
         * again by the next epoll_wait (level-triggered). */
        for (int i = 0; i < got && !L->failed && !samples_full(L); i++) {
            uint32_t who = events[i].data.u32;
            if (who == (uint32_t)L->n) {
                uint64_t v;
                if (read(L->stopfd, &v, sizeof v) < 0 && errno != EAGAIN) { /* drained anyway */ }
                return __atomic_load_n(&L->stopping, __ATOMIC_ACQUIRE) ? EV_STOPPED : EV_WOKEN;
            }
            if (who > (uint32_t)L->n) {
                loop_fail(L, "%s: %s", "event loop", "an event for no user");
                return EV_FAILED;
            }
            L->tp->ready(L, &L->users[who], events[i].events);
        }
        if (L->sleeping && !L->failed) {
            int64_t t = now_ns();
            for (int i = 0; i < L->n && !L->failed; i++)
                if (L->users[i].state == S_SLEEP) tick(L, &L->users[i], t);
        }
    }
}

