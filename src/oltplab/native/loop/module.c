/* The module oltplab._native: its types and constants. */
#include "mariadb.h"

/* ------------------------------------------------------------------------------------------ */
/* The module                                                                                 */

/* A tuple of n new objects made by make(i), or NULL with an exception set. */
static PyObject *tuple_of(int n, PyObject *(*make)(int)) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *v = make(i);
        if (!v) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *weight(int k) { return PyLong_FromLong(WEIGHTS[k]); }
static PyObject *name(int k) { return PyUnicode_FromString(NAMES[k]); }
static PyObject *keying(int k) { return PyFloat_FromDouble(KEYING_S[k]); }
static PyObject *think_mean(int k) { return PyFloat_FromDouble(THINK_MEAN_S[k]); }
static PyObject *statement(int i) { return PyUnicode_FromString(SQL_STATEMENTS[i]); }

static int count_statements(void) {
    int n = 0;
    while (SQL_STATEMENTS[n]) n++;
    return n;
}

/* MARIADB_SQL: the statements of MariaDB's --mode sql by name (printf formats). */
static PyObject *mariadb_sql(void) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && MY_SQL[i].name; i++) {
        PyObject *v = PyUnicode_FromString(MY_SQL[i].text);
        if (!v || PyDict_SetItemString(d, MY_SQL[i].name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* Add value (a new reference, NULL when making it failed) as m.name; steals value. */
static int add(PyObject *m, const char *attr, PyObject *value) {
    if (!value) return -1;
    if (PyModule_AddObject(m, attr, value) < 0) {
        Py_DECREF(value);
        return -1;
    }
    return 0;
}

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "oltplab._native",
                                    "The virtual users' hot path in C.", -1, NULL};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&TerminalType) < 0 || PyType_Ready(&ProcLoopType) < 0 ||
        PyType_Ready(&MariaDBLoopType) < 0 || PyType_Ready(&MyConnType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&TerminalType);
    Py_INCREF(&ProcLoopType);
    Py_INCREF(&MariaDBLoopType);
    Py_INCREF(&MyConnType);
    if (add(m, "Terminal", (PyObject *)&TerminalType) < 0 ||
        add(m, "ProcLoop", (PyObject *)&ProcLoopType) < 0 ||
        add(m, "MariaDBLoop", (PyObject *)&MariaDBLoopType) < 0 ||
        add(m, "MariaDBConnection", (PyObject *)&MyConnType) < 0 ||
        add(m, "WEIGHTS", tuple_of(NKINDS, weight)) < 0 ||
        add(m, "NAMES", tuple_of(NKINDS, name)) < 0 ||
        add(m, "SQL_STATEMENTS", tuple_of(count_statements(), statement)) < 0 ||
        add(m, "MARIADB_SQL", mariadb_sql()) < 0 ||
        add(m, "KEYING_S", tuple_of(NKINDS, keying)) < 0 ||
        add(m, "THINK_MEAN_S", tuple_of(NKINDS, think_mean)) < 0 ||
        add(m, "THINK_CAP", PyFloat_FromDouble(THINK_CAP)) < 0 ||
        PyModule_AddIntConstant(m, "DECK_SIZE", DECK_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "NOT_AN_ITEM", NOT_AN_ITEM) < 0 ||
        PyModule_AddIntConstant(m, "BOUNDARY", EV_BOUNDARY) < 0 ||
        PyModule_AddIntConstant(m, "FINISHED", EV_FINISHED) < 0 ||
        PyModule_AddIntConstant(m, "SAMPLES", EV_SAMPLES) < 0 ||
        PyModule_AddIntConstant(m, "FAILED", EV_FAILED) < 0 ||
        PyModule_AddIntConstant(m, "STOPPED", EV_STOPPED) < 0 ||
        PyModule_AddIntConstant(m, "LOST", EV_LOST) < 0 ||
        PyModule_AddIntConstant(m, "WOKEN", EV_WOKEN) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
