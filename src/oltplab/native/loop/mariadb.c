/*
 * MariaDB's client library, libmariadb.so.3, opened at run time (dlopen) the first time a
 * MariaDB session is opened: the module imports, and PostgreSQL runs, where it is absent.
 * MariaDBConnection is one virtual user's session, opened here so that the driver needs no
 * Python client: non-blocking calls enabled (MYSQL_OPT_NONBLOCK, for myloop.c), several
 * statements per query (CLIENT_MULTI_STATEMENTS), no LOAD DATA LOCAL, autocommit on, and
 * snapshot isolation off where the server has it (as HammerDB does: with it on, a transaction
 * that writes a row changed since its snapshot fails with "Record has changed since last
 * read").
 */
#include "mariadb.h"

struct my_api my;

#define LIBMARIADB_SO "libmariadb.so.3"
#define ER_UNKNOWN_SYSTEM_VARIABLE 1193

/* The library: the system's, or the file OLTPLAB_LIBMARIADB names (another build). */
int load_libmariadb(void) {
    if (my.loaded) return 0;
    const char *path = getenv("OLTPLAB_LIBMARIADB");
    if (!path || !*path) path = LIBMARIADB_SO;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        PyErr_Format(PyExc_RuntimeError,
                     "MariaDB needs its client library %s (Debian package libmariadb3): %s",
                     path, why ? why : "not found");
        return -1;
    }
#define SYM(field, name)                                                                     \
    if (!(*(void **)&my.field = dlsym(h, name))) {                                           \
        PyErr_Format(PyExc_RuntimeError, "%s has no %s", path, name);                          \
        dlclose(h);                                                                          \
        return -1;                                                                           \
    }
    SYM(server_init, "mysql_server_init")
    SYM(init, "mysql_init")
    SYM(options, "mysql_options")
    SYM(real_connect, "mysql_real_connect")
    SYM(close, "mysql_close")
    SYM(autocommit, "mysql_autocommit")
    SYM(query, "mysql_real_query")
    SYM(errno_of, "mysql_errno")
    SYM(error, "mysql_error")
    SYM(thread_id, "mysql_thread_id")
    SYM(get_socket, "mysql_get_socket")
    SYM(store_result, "mysql_store_result")
    SYM(fetch_row, "mysql_fetch_row")
    SYM(free_result, "mysql_free_result")
    SYM(num_rows, "mysql_num_rows")
    SYM(num_fields, "mysql_num_fields")
    SYM(data_seek, "mysql_data_seek")
    SYM(real_query_start, "mysql_real_query_start")
    SYM(real_query_cont, "mysql_real_query_cont")
    SYM(store_result_start, "mysql_store_result_start")
    SYM(store_result_cont, "mysql_store_result_cont")
    SYM(next_result_start, "mysql_next_result_start")
    SYM(next_result_cont, "mysql_next_result_cont")
#undef SYM
    if (my.server_init(0, NULL, NULL) != 0) { /* once, before any thread uses the library */
        PyErr_Format(PyExc_RuntimeError, "%s did not initialise", path);
        dlclose(h);
        return -1;
    }
    my.loaded = 1; /* the handle stays open for the process */
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* MariaDBConnection                                                                          */

/* Raise ``type`` with "what: message (error N)", the message's first line. */
static int my_error(PyObject *type, MYSQL *m, const char *what) {
    char msg[384];
    snprintf(msg, sizeof msg, "%s (error %u)", my.error(m), my.errno_of(m));
    first_line(msg);
    PyErr_Format(type, "%s: %s", what, msg);
    return -1;
}

/* The session's settings, blocking: -1 with *what saying which failed. */
static int set_up(MYSQL *m, const char **what) {
    static const char snapshot[] = "SET SESSION innodb_snapshot_isolation = OFF";
    *what = "autocommit";
    if (my.autocommit(m, 1)) return -1;
    *what = "turning snapshot isolation off";
    if (my.query(m, snapshot, sizeof snapshot - 1) && my.errno_of(m) != ER_UNKNOWN_SYSTEM_VARIABLE)
        return -1;
    return 0;
}

static int MyConn_init(MyConn *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"host", "port", "user", "password", "database", "unix_socket",
                             "option_file", "connect_timeout", NULL};
    const char *host = NULL, *user = NULL, *password = NULL, *db = NULL, *sock = NULL,
               *option_file = NULL;
    unsigned int port = 0, timeout = 10;
    if (self->m) {
        PyErr_SetString(PyExc_RuntimeError, "a MariaDBConnection is opened once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zIzzzzzI", kwlist, &host, &port, &user,
                                     &password, &db, &sock, &option_file, &timeout))
        return -1;
    if (load_libmariadb() < 0) return -1;
    MYSQL *m = my.init(NULL);
    if (!m) {
        PyErr_NoMemory();
        return -1;
    }
    unsigned int no_local_infile = 0; /* LOAD DATA LOCAL lets a server ask for our files */
    if (my.options(m, MYSQL_OPT_NONBLOCK, 0) ||
        my.options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout) ||
        my.options(m, MYSQL_OPT_LOCAL_INFILE, &no_local_infile) ||
        my.options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4") ||
        (option_file && my.options(m, MYSQL_READ_DEFAULT_FILE, option_file))) {
        my.close(m);
        PyErr_SetString(PyExc_RuntimeError, "libmariadb refused an option");
        return -1;
    }
    MYSQL *ok;
    const char *what = "connecting";
    Py_BEGIN_ALLOW_THREADS
    ok = my.real_connect(m, host, user, password, db, port, sock, CLIENT_MULTI_STATEMENTS);
    if (ok && set_up(m, &what) < 0) ok = NULL;
    Py_END_ALLOW_THREADS
    if (!ok) {
        my_error(PyExc_ConnectionError, m, what);
        my.close(m);
        return -1;
    }
    self->m = m;
    return 0;
}

static void MyConn_dealloc(MyConn *self) {
    if (self->m) my.close(self->m); /* a loop holds a reference while it drives it */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *MyConn_close(MyConn *self, PyObject *unused) {
    if (self->driven) {
        PyErr_SetString(PyExc_RuntimeError, "the connection is driven by a MariaDBLoop");
        return NULL;
    }
    if (self->m) {
        MYSQL *m = self->m;
        self->m = NULL;
        Py_BEGIN_ALLOW_THREADS
        my.close(m);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

/* scalar(sql): run a statement (blocking, the GIL released) and return the first column of
 * its first row as text, None when it has none (or NULL). */
static PyObject *MyConn_scalar(MyConn *self, PyObject *arg) {
    Py_ssize_t n;
    const char *sql = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!sql) return NULL;
    if (!self->m || self->driven) {
        PyErr_SetString(PyExc_RuntimeError, self->m ? "the connection is driven by a MariaDBLoop"
                                                    : "the connection is closed");
        return NULL;
    }
    MYSQL *m = self->m;
    MYSQL_RES *res = NULL;
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = my.query(m, sql, (unsigned long)n) != 0;
    if (!failed) {
        res = my.store_result(m);
        failed = !res && my.errno_of(m) != 0;
    }
    Py_END_ALLOW_THREADS
    if (failed) return my_error(PyExc_RuntimeError, m, "query"), NULL;
    PyObject *out = NULL;
    MYSQL_ROW row = res ? my.fetch_row(res) : NULL;
    if (row && row[0])
        out = PyUnicode_DecodeUTF8(row[0], (Py_ssize_t)strlen(row[0]), "replace");
    else
        out = Py_NewRef(Py_None);
    if (res) my.free_result(res);
    return out;
}

static PyObject *MyConn_get_thread_id(MyConn *self, void *c) {
    if (!self->m) Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(my.thread_id(self->m));
}

static PyObject *MyConn_get_closed(MyConn *self, void *c) { return PyBool_FromLong(!self->m); }

static PyMethodDef MyConn_methods[] = {
    {"scalar", (PyCFunction)MyConn_scalar, METH_O,
     "scalar(sql): the first column of the statement's first row as text, or None "
     "(blocking)."},
    {"close", (PyCFunction)MyConn_close, METH_NOARGS,
     "Close the session (not while a MariaDBLoop drives it)."},
    {NULL}};

static PyGetSetDef MyConn_getset[] = {
    {"thread_id", (getter)MyConn_get_thread_id, NULL,
     "The server's id of the session (what KILL takes), None once closed.", NULL},
    {"closed", (getter)MyConn_get_closed, NULL, "The session is closed (or never opened).",
     NULL},
    {NULL}};

PyTypeObject MyConnType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "oltplab._native.MariaDBConnection",
    .tp_doc = PyDoc_STR("MariaDBConnection(host=None, port=0, user=None, password=None, "
                        "database=None, unix_socket=None, option_file=None, "
                        "connect_timeout=10): one user's MariaDB session (blocking open)."),
    .tp_basicsize = sizeof(MyConn),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MyConn_init,
    .tp_dealloc = (destructor)MyConn_dealloc,
    .tp_methods = MyConn_methods,
    .tp_getset = MyConn_getset,
};
