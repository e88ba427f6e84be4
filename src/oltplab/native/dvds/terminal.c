/*
 * DvdsTerminal: one simulated shopper of the DVD-Store-derived workload. Each draw gives the
 *   next call of its order; the order's state travels in the loop's buffer of the user
 *   (dvds_txn_t), so a draw reads how the previous call ended:
 *
 *   1. one uniform u per order: u < pct_new_customers / 100 -> new_customer (username
 *      newuser<1..10^9>, a random profile), else login (user<1..customers>); a new_customer
 *      that returned 0 (the name is taken) is drawn again with another name;
 *   2. uniform 1 .. 2*searches-1 browses, each by category (1..16), by actor (a full name)
 *      or by title (a word), one third each, up to uniform 1 .. 2*search_batch-1 rows;
 *   3. the purchase: uniform 1 .. 2*line_items-1 items, at most 10, every 10,000th product
 *      ten times as likely, quantity 1..3, for the customer login or new_customer returned;
 *   4. think time uniform 0 .. 2*think_time after the purchase (no keying time).
 *
 *   With ds3 (DVD Store 3's steps), between 2 and 3: uniform 1 .. 2*review_searches-1 review
 *   searches, each of a product (uniform), by actor or by title, one third each, for reviews
 *   of at least 1..5 stars, up to 1 .. 2*search_batch-1 of them; then a new review, a
 *   helpfulness rating (of a review 1..review_ids) and a new membership (tier 1..3), for
 *   pct_new_reviews, pct_new_helpfulness and pct_new_members percent of the orders, each
 *   decided by a uniform of its own drawn at the order's start after DS2's draws (a DS2 run
 *   draws the same numbers as before DS3 came).
 *
 *   A call that failed (an error the loop did not retry) leaves the buffer as drawn, not
 *   completed: the next draw starts a new order, as does a login that found no one.
 */
#include "dvds.h"

const char *const DVDS_NAMES[DVDS_NKINDS] = {
    "login", "new_customer", "browse_category", "browse_actor", "browse_title", "purchase",
    "reviews_product", "reviews_actor", "reviews_title", "new_review", "new_helpfulness",
    "new_member"};

/* ------------------------------------------------------------------------------------------ */
/* The draws                                                                                  */

/* n random capital letters into buf (n + 1 bytes) */
static void letters(rng_t *r, char *buf, int n) {
    for (int i = 0; i < n; i++) buf[i] = (char)('A' + uniform(r, 0, 25));
    buf[n] = 0;
}

static const char *pick(DvdsTerminal *t, int list) {
    const dvds_list_t *l = &t->lists[list];
    return l->w[uniform(&t->rng, 0, l->n - 1)];
}

/* copy a word (shorter than DVDS_WORD_BYTES: checked when the lists were taken) */
static void copy_word(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src); }

/* uniform 1 .. 2n-1: mean n */
static int around(rng_t *r, int n) { return (int)uniform(r, 1, 2 * (int64_t)n - 1); }

/* A product, uniform over 1..products but every DVDS_POPULAR_EVERY-th one weighs
 * DVDS_POPULAR_WEIGHT: the popular ones' extra weight lies past the end of the range. */
static int32_t product(DvdsTerminal *t) {
    int64_t popular = t->products / DVDS_POPULAR_EVERY;
    int64_t extra = DVDS_POPULAR_WEIGHT - 1;
    int64_t v = uniform(&t->rng, 0, t->products + popular * extra - 1);
    if (v < t->products) return (int32_t)(v + 1);
    return (int32_t)(((v - t->products) / extra + 1) * DVDS_POPULAR_EVERY);
}

/* A new customer, drawn as the build draws its customers (workloads/dvds/population.py) but
 * for its name: newuser<1..10^9>. */
static void draw_profile(DvdsTerminal *t, dvds_profile_t *p) {
    rng_t *r = &t->rng;
    memset(p, 0, sizeof *p);
    letters(r, p->first, t->first_name_len);
    letters(r, p->last, t->last_name_len);
    p->house = (int32_t)uniform(r, 0, 9999);
    letters(r, p->street, 7);
    letters(r, p->city, 8);
    p->region = uniform(r, 1, 2) == 1 ? 1 : 2;
    if (p->region == 1) { /* half in the US: a state and a zip code */
        copy_word(p->country, sizeof p->country, DVDS_US);
        copy_word(p->state, sizeof p->state, pick(t, DVDS_STATES));
        p->zip = (int32_t)uniform(r, 0, 99999);
    } else {
        copy_word(p->country, sizeof p->country, pick(t, DVDS_COUNTRIES));
        p->zip = -1;
    }
    p->phone = uniform(r, 1000000000LL, 9999999999LL);
    p->card_type = (int32_t)uniform(r, 1, 5);
    p->card = uniform(r, 1000000000000000LL, 9999999999999999LL);
    p->exp_year = (int32_t)uniform(r, 2025, 2030);
    p->exp_month = (int32_t)uniform(r, 1, 12);
    p->user = uniform(r, 1, DVDS_NEW_USERS);
    p->age = (int32_t)uniform(r, 18, 90);
    p->income = (int32_t)(20000 * uniform(r, 1, 5));
    p->gender = uniform(r, 0, 1) ? 'M' : 'F';
}

static void draw_cart(DvdsTerminal *t, dvds_txn_t *x) {
    int n = around(&t->rng, t->line_items);
    x->cart.items = n < DVDS_MAX_CART ? n : DVDS_MAX_CART;
    for (int i = 0; i < x->cart.items; i++) {
        x->cart.prod[i] = product(t);
        x->cart.quantity[i] = (int32_t)uniform(&t->rng, 1, DVDS_MAX_QUANTITY);
    }
}

/* A browse of the order: one of the three kinds, uniformly. */
static int browse(DvdsTerminal *t, dvds_txn_t *x) {
    x->searches_left--;
    return DVDS_BROWSE_CATEGORY + (int)uniform(&t->rng, 0, 2);
}

/* After the browses: DS3's steps (its review searches, each of the three kinds uniformly,
 * then the new review, the helpfulness rating and the new membership the order drew), then
 * the purchase. */
static int after_browses(DvdsTerminal *t, dvds_txn_t *x) {
    if (!t->ds3) return DVDS_PURCHASE;
    if (x->reviews_left > 0) {
        x->reviews_left--;
        return DVDS_REVIEWS_PRODUCT + (int)uniform(&t->rng, 0, 2);
    }
    for (int k = 0; k < 3; k++)
        if (x->ds3_steps & (1 << k)) {
            x->ds3_steps &= ~(1 << k);
            return DVDS_NEW_REVIEW + k;
        }
    return DVDS_PURCHASE;
}

/* DS3's draws at an order's start, one uniform per percentage choice, after DS2's. */
static void draw_ds3_steps(DvdsTerminal *t, dvds_txn_t *x) {
    x->reviews_left = x->ds3_steps = 0;
    if (!t->ds3) return;
    x->reviews_left = around(&t->rng, t->review_searches);
    if (rng_unit(&t->rng) < t->pct_new_reviews / 100.0) x->ds3_steps |= 1;
    if (rng_unit(&t->rng) < t->pct_new_helpfulness / 100.0) x->ds3_steps |= 2;
    if (rng_unit(&t->rng) < t->pct_new_members / 100.0) x->ds3_steps |= 4;
}

/* n words of the title list, as many as fit in buf (size bytes), separated by spaces. */
static void some_words(DvdsTerminal *t, char *buf, size_t size, int n) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *w = pick(t, DVDS_TITLE_WORDS);
        size_t len = strlen(w);
        if (at + (at > 0) + len + 1 > size) continue;
        if (at > 0) buf[at++] = ' ';
        memcpy(buf + at, w, len + 1);
        at += len;
    }
}

static void draw_search(DvdsTerminal *t, dvds_txn_t *x, int kind) {
    rng_t *r = &t->rng;
    x->search.prod = 0;
    x->search.text[0] = 0;
    if (kind == DVDS_REVIEWS_PRODUCT) {
        x->search.prod = (int32_t)uniform(r, 1, t->products);
    } else if (kind == DVDS_REVIEWS_ACTOR) {
        const char *first = pick(t, DVDS_ACTOR_FIRST), *last = pick(t, DVDS_ACTOR_LAST);
        snprintf(x->search.text, sizeof x->search.text, "%s %s", first, last);
    } else {
        copy_word(x->search.text, sizeof x->search.text, pick(t, DVDS_TITLE_WORDS));
    }
    x->search.stars = (int32_t)uniform(r, 1, DVDS_STARS);
    x->search.batch = around(r, t->search_batch);
}

/* DS3's calls but the searches: a review, a helpfulness rating, a membership's tier. */
static void draw_ds3_write(DvdsTerminal *t, dvds_txn_t *x, int kind) {
    rng_t *r = &t->rng;
    if (kind == DVDS_NEW_REVIEW) {
        x->review.prod = (int32_t)uniform(r, 1, t->products);
        x->review.stars = (int32_t)uniform(r, 1, DVDS_STARS);
        some_words(t, x->review.summary, sizeof x->review.summary, 2);
        some_words(t, x->review.text, sizeof x->review.text,
                   (int)uniform(r, DVDS_REVIEW_WORDS_MIN, DVDS_REVIEW_WORDS_MAX));
    } else if (kind == DVDS_NEW_HELPFULNESS) {
        x->rating.review = (int32_t)uniform(r, 1, t->review_ids);
        x->rating.helpfulness = (int32_t)uniform(r, 1, DVDS_HELPFULNESS);
    } else {
        x->tier = (int32_t)uniform(r, 1, DVDS_TIERS);
    }
}

/* The kind of the next call, from how the previous one ended; a new order when it failed,
 * when the order is over, or when it could not go on. */
static int next_kind(DvdsTerminal *t, dvds_txn_t *x) {
    if (x->done) {
        int ok = x->has && x->value > 0;
        switch (x->kind) {
        case DVDS_LOGIN: /* 0: no such customer (the order is over) */
        case DVDS_NEW_CUSTOMER:
            if (ok) {
                x->customer = x->value;
                return browse(t, x);
            }
            if (x->kind == DVDS_NEW_CUSTOMER && x->has && x->value == 0)
                return DVDS_NEW_CUSTOMER; /* the name is taken: another one */
            break;
        case DVDS_BROWSE_CATEGORY:
        case DVDS_BROWSE_ACTOR:
        case DVDS_BROWSE_TITLE:
            return x->searches_left > 0 ? browse(t, x) : after_browses(t, x);
        case DVDS_PURCHASE: /* the purchase ended the order */
            break;
        default: /* DS3's steps go on whatever they found */
            return after_browses(t, x);
        }
    }
    double u = rng_unit(&t->rng); /* the order's one draw for its new-customer choice */
    x->customer = 0;
    x->order_us = 0;
    x->searches_left = around(&t->rng, t->searches);
    draw_ds3_steps(t, x);
    return u < t->pct_new_customers / 100.0 ? DVDS_NEW_CUSTOMER : DVDS_LOGIN;
}

/* The next call of the user's order into x: its kind. */
int dvds_draw(DvdsTerminal *t, dvds_txn_t *x) {
    rng_t *r = &t->rng;
    int kind = next_kind(t, x);
    x->kind = kind;
    x->done = x->has = 0;
    x->value = 0;
    switch (kind) {
    case DVDS_LOGIN:
        x->user = uniform(r, 1, t->customers);
        break;
    case DVDS_NEW_CUSTOMER:
        draw_profile(t, &x->profile);
        break;
    case DVDS_BROWSE_CATEGORY:
        x->browse.category = (int32_t)uniform(r, 1, DVDS_CATEGORIES);
        x->browse.text[0] = 0;
        x->browse.batch = around(r, t->search_batch);
        break;
    case DVDS_BROWSE_ACTOR: {
        const char *first = pick(t, DVDS_ACTOR_FIRST), *last = pick(t, DVDS_ACTOR_LAST);
        snprintf(x->browse.text, sizeof x->browse.text, "%s %s", first, last);
        x->browse.category = 0;
        x->browse.batch = around(r, t->search_batch);
        break;
    }
    case DVDS_BROWSE_TITLE:
        copy_word(x->browse.text, sizeof x->browse.text, pick(t, DVDS_TITLE_WORDS));
        x->browse.category = 0;
        x->browse.batch = around(r, t->search_batch);
        break;
    case DVDS_PURCHASE:
        draw_cart(t, x);
        break;
    case DVDS_REVIEWS_PRODUCT:
    case DVDS_REVIEWS_ACTOR:
    case DVDS_REVIEWS_TITLE:
        draw_search(t, x, kind);
        break;
    default:
        draw_ds3_write(t, x, kind);
        break;
    }
    return kind;
}

/* Seconds to wait after a call of the kind: uniform 0 .. 2*think_time after the purchase. */
double dvds_think(DvdsTerminal *t, int kind) {
    if (kind != DVDS_PURCHASE || t->think_time <= 0) return 0;
    return rng_unit(&t->rng) * 2 * t->think_time;
}

/* ------------------------------------------------------------------------------------------ */
/* The Python type                                                                            */

/* A DvdsTerminal whose __init__ never succeeded has no word lists; one a ProcLoop drives is
 * the loop's alone. 0, or -1 with RuntimeError. */
int dvds_term_check(DvdsTerminal *t) {
    return workload_term_free("DvdsTerminal", t->lists[0].w != NULL, t->driven);
}

static const char *const LIST_KEYS[DVDS_NLISTS] = {"title_words", "actor_first", "actor_last",
                                                   "countries", "states"};

static void free_lists(dvds_list_t *lists) {
    for (int i = 0; i < DVDS_NLISTS; i++) {
        PyMem_Free(lists[i].w);
        lists[i].w = NULL;
        lists[i].n = 0;
    }
}

/* Copy the word list ``seq`` (Python's ``key``) into out: 0, or -1 with an exception. */
static int take_list(PyObject *seq, const char *key, dvds_list_t *out) {
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "DvdsTerminal() needs %s, a tuple of words", key);
        return -1;
    }
    if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of words, not one string", key);
        return -1;
    }
    PyObject *fast = PySequence_Fast(seq, "word lists must be sequences of str");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int rc = -1;
    if (n < 1 || n > DVDS_MAX_WORDS) {
        PyErr_Format(PyExc_ValueError, "%s must hold 1..%d words, not %zd", key, DVDS_MAX_WORDS,
                     n);
        goto done;
    }
    out->w = PyMem_Malloc(sizeof(dvds_word_t) * (size_t)n);
    if (!out->w) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] is not a str", key, i);
            goto done;
        }
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(item, &len);
        if (!s) goto done;
        if (len < 1 || len >= DVDS_WORD_BYTES || !dvds_word_ok(s, (size_t)len)) {
            PyErr_Format(PyExc_ValueError,
                         "%s[%zd] %R: a word is 1..%d of the characters A-Z a-z 0-9 space "
                         ". @ -", key, i, item, DVDS_WORD_BYTES - 1);
            goto done;
        }
        memcpy(out->w[i], s, (size_t)len + 1);
    }
    out->n = (int)n;
    rc = 0;
done:
    Py_DECREF(fast);
    return rc;
}

/* A count given from Python within lo..hi: 0, or -1 with ValueError. */
static int in_range(const char *key, long long v, long long lo, long long hi) {
    if (v >= lo && v <= hi) return 0;
    PyErr_Format(PyExc_ValueError, "%s must be within %lld..%lld, not %lld", key, lo, hi, v);
    return -1;
}

/* Everything is parsed and checked before the object changes: a failed __init__ leaves it
 * as it was. */
static int DvdsTerminal_init(DvdsTerminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"seed", "customers", "products", "pct_new_customers", "searches",
                             "search_batch", "line_items", "think_time", "title_words",
                             "actor_first", "actor_last", "first_name_len", "last_name_len",
                             "countries", "states", "ds3", "review_searches",
                             "pct_new_reviews", "pct_new_helpfulness", "pct_new_members",
                             "review_ids", NULL};
    unsigned long long seed;
    long long customers, products;
    double pct = 20.0, think_time = 0.0;
    int searches = 3, search_batch = 5, line_items = 5, first_len = 6, last_len = 10;
    int ds3 = 0, review_searches = 3;
    double pct_reviews = 5.0, pct_helpfulness = 10.0, pct_members = 1.0;
    long long review_ids = 1;
    PyObject *seqs[DVDS_NLISTS] = {NULL};
    if (self->driven) return dvds_term_check(self);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KLL|diiid$OOOiiOOpidddL", kwlist, &seed,
                                     &customers, &products, &pct, &searches, &search_batch,
                                     &line_items, &think_time, &seqs[DVDS_TITLE_WORDS],
                                     &seqs[DVDS_ACTOR_FIRST], &seqs[DVDS_ACTOR_LAST],
                                     &first_len, &last_len, &seqs[DVDS_COUNTRIES],
                                     &seqs[DVDS_STATES], &ds3, &review_searches, &pct_reviews,
                                     &pct_helpfulness, &pct_members, &review_ids))
        return -1;
    if (in_range("customers", customers, 1, INT64_MAX / 2) < 0 ||
        in_range("products", products, 1, INT32_MAX) < 0 ||
        in_range("searches", searches, 1, DVDS_MAX_COUNT) < 0 ||
        in_range("search_batch", search_batch, 1, DVDS_MAX_COUNT) < 0 ||
        in_range("line_items", line_items, 1, DVDS_MAX_COUNT) < 0 ||
        in_range("first_name_len", first_len, 1, DVDS_MAX_NAME) < 0 ||
        in_range("last_name_len", last_len, 1, DVDS_MAX_NAME) < 0 ||
        in_range("review_searches", review_searches, 1, DVDS_MAX_COUNT) < 0 ||
        in_range("review_ids", review_ids, 1, INT32_MAX) < 0)
        return -1;
    const char *pct_keys[] = {"pct_new_customers", "pct_new_reviews", "pct_new_helpfulness",
                              "pct_new_members"};
    double pcts[] = {pct, pct_reviews, pct_helpfulness, pct_members};
    for (int i = 0; i < 4; i++)
        if (!(pcts[i] >= 0 && pcts[i] <= 100)) { /* NaN too */
            char msg[96];
            snprintf(msg, sizeof msg, "%s must be within 0..100, not %g", pct_keys[i], pcts[i]);
            PyErr_SetString(PyExc_ValueError, msg);
            return -1;
        }
    if (!(think_time >= 0 && isfinite(think_time))) {
        PyErr_SetString(PyExc_ValueError, "think_time must be a finite number of seconds >= 0");
        return -1;
    }
    dvds_list_t lists[DVDS_NLISTS] = {{0}};
    for (int i = 0; i < DVDS_NLISTS; i++)
        if (take_list(seqs[i], LIST_KEYS[i], &lists[i]) < 0) {
            free_lists(lists);
            return -1;
        }
    free_lists(self->lists);
    memcpy(self->lists, lists, sizeof lists);
    rng_seed(&self->rng, seed);
    self->customers = customers;
    self->products = products;
    self->pct_new_customers = pct;
    self->searches = searches;
    self->search_batch = search_batch;
    self->line_items = line_items;
    self->first_name_len = first_len;
    self->last_name_len = last_len;
    self->think_time = think_time;
    self->ds3 = ds3;
    self->review_searches = review_searches;
    self->pct_new_reviews = pct_reviews;
    self->pct_new_helpfulness = pct_helpfulness;
    self->pct_new_members = pct_members;
    self->review_ids = review_ids;
    memset(self->txn, 0, sizeof self->txn);
    memset(self->inputs, 0, sizeof self->inputs);
    self->drawn = 0;
    return 0;
}

static void DvdsTerminal_dealloc(DvdsTerminal *self) {
    free_lists(self->lists);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* next_call(): the next call as the loop draws it, after the last one completed (complete())
 * or failed (no complete()): (kind's name, its arguments as the text libpq sends). */
static PyObject *DvdsTerminal_next_call(DvdsTerminal *self, PyObject *unused) {
    if (dvds_term_check(self) < 0) return NULL;
    dvds_txn_t *x = (dvds_txn_t *)self->txn;
    int kind = dvds_draw(self, x);
    self->drawn = 1;
    char text[MAX_CALL_ARGS][ARG_TEXT];
    PyObject *args = text_args_tuple(text, dvds_args_text(x, text, MAX_CALL_ARGS));
    return args ? Py_BuildValue("(sN)", DVDS_NAMES[kind], args) : NULL;
}

static int check_drawn(DvdsTerminal *self) {
    if (dvds_term_check(self) < 0) return -1;
    if (!self->drawn) {
        PyErr_SetString(PyExc_RuntimeError, "no call drawn yet: next_call() first");
        return -1;
    }
    return 0;
}

/* complete() once per call drawn, as the loop does */
static int check_open(DvdsTerminal *self) {
    if (check_drawn(self) < 0) return -1;
    if (((dvds_txn_t *)self->txn)->done) {
        PyErr_SetString(PyExc_RuntimeError, "the call was completed already: next_call() first");
        return -1;
    }
    return 0;
}

/* complete(value, us=0): the last call drawn returned value (None: no value) after us
 * microseconds, as the loop tells the workload; what it counts as. */
static PyObject *DvdsTerminal_complete(DvdsTerminal *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"value", "us", NULL};
    PyObject *value;
    long long us = 0;
    if (check_open(self) < 0 || !PyArg_ParseTupleAndKeywords(args, kw, "O|L", kwlist, &value,
                                                             &us))
        return NULL;
    int has = value != Py_None;
    long long v = has ? PyLong_AsLongLong(value) : 0;
    if (v == -1 && PyErr_Occurred()) return NULL;
    int64_t unit_us = 0;
    int done = dvds_completed((dvds_txn_t *)self->txn, has, v, us, self->inputs, &unit_us);
    PyObject *unit = done & DONE_UNIT ? PyLong_FromLongLong(unit_us) : Py_NewRef(Py_None);
    return Py_BuildValue("{s:O,s:O,s:N}", "headline", done & DONE_HEADLINE ? Py_True : Py_False,
                         "rolled_back", done & DONE_ROLLED_BACK ? Py_True : Py_False,
                         "unit_us", unit);
}

/* inputs(): the input counts of the calls complete() was told of. */
static PyObject *DvdsTerminal_inputs(DvdsTerminal *self, PyObject *unused) {
    if (dvds_term_check(self) < 0) return NULL;
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < DVDS_NINPUTS; i++) {
        PyObject *v = PyLong_FromLongLong(self->inputs[i]);
        if (!v || PyDict_SetItemString(d, DVDS_INPUT_KEYS[i], v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* mariadb_call(out_var="@o"): the last call drawn as the MariaDB CALL the loop sends. */
static PyObject *DvdsTerminal_mariadb_call(DvdsTerminal *self, PyObject *args) {
    const char *out_var = "@o";
    if (check_drawn(self) < 0 || !PyArg_ParseTuple(args, "|s", &out_var)) return NULL;
    char buf[1024];
    int n = dvds_call_text((const dvds_txn_t *)self->txn, out_var, buf, sizeof buf);
    if (n < 0) {
        PyErr_SetString(PyExc_OverflowError, "the CALL does not fit its buffer");
        return NULL;
    }
    return PyUnicode_FromStringAndSize(buf, n);
}

/* think_time(kind): seconds the loop waits after a call of the kind (an index of DVDS_NAMES). */
static PyObject *DvdsTerminal_think_time(DvdsTerminal *self, PyObject *arg) {
    if (dvds_term_check(self) < 0) return NULL;
    long kind = PyLong_AsLong(arg);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    if (kind < 0 || kind >= DVDS_NKINDS) {
        PyErr_Format(PyExc_ValueError, "no call kind %ld", kind);
        return NULL;
    }
    return PyFloat_FromDouble(dvds_think(self, (int)kind));
}

static PyMethodDef DvdsTerminal_methods[] = {
    {"next_call", (PyCFunction)DvdsTerminal_next_call, METH_NOARGS,
     "The next call of the order, drawn as the loop draws it, after the last one completed "
     "(complete()) or failed (no complete()): (kind's name, its arguments as text)."},
    {"complete", (PyCFunction)(void (*)(void))DvdsTerminal_complete,
     METH_VARARGS | METH_KEYWORDS,
     "complete(value, us=0): the last call returned value (None: nothing) after us "
     "microseconds; {'headline', 'rolled_back', 'unit_us' (None unless it ended the order)}."},
    {"inputs", (PyCFunction)DvdsTerminal_inputs, METH_NOARGS,
     "The input counts of the calls complete() was told of, by DVDS_INPUT_KEYS."},
    {"mariadb_call", (PyCFunction)DvdsTerminal_mariadb_call, METH_VARARGS,
     "mariadb_call(out_var='@o'): the last call drawn as the CALL MariaDB's loop sends."},
    {"think_time", (PyCFunction)DvdsTerminal_think_time, METH_O,
     "think_time(kind): the seconds to wait after a call of the kind (an index)."},
    {NULL}};

PyTypeObject DvdsTerminalType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.DvdsTerminal",
    .tp_doc = PyDoc_STR(
        "DvdsTerminal(seed, customers, products, pct_new_customers=20, searches=3, "
        "search_batch=5, line_items=5, think_time=0.0, *, title_words, actor_first, "
        "actor_last, first_name_len=6, last_name_len=10, countries, states, ds3=False, "
        "review_searches=3, pct_new_reviews=5, pct_new_helpfulness=10, pct_new_members=1, "
        "review_ids=1): one simulated shopper of the DVD-Store-derived workload (ds3: DVD "
        "Store 3's steps too, rating reviews 1..review_ids); countries are those outside the "
        "US (a new customer of region 1 lives in the US), words 1..31 of A-Z a-z 0-9 space . "
        "@ -."),
    .tp_basicsize = sizeof(DvdsTerminal),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)DvdsTerminal_init,
    .tp_dealloc = (destructor)DvdsTerminal_dealloc,
    .tp_methods = DvdsTerminal_methods,
};
