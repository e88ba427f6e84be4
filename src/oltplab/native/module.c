/* The module oltplab._native: its types and constants. */
#include "native.h"

/* ------------------------------------------------------------------------------------------ */
/* The module                                                                                 */

static PyObject *doubles(const double *v, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) PyTuple_SET_ITEM(t, i, PyFloat_FromDouble(v[i]));
    return t;
}

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "oltplab._native",
                                    "The virtual users' hot path in C.", -1, NULL};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&TerminalType) < 0 || PyType_Ready(&ProcLoopType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *w = PyTuple_New(NKINDS), *names = PyTuple_New(NKINDS);
    Py_ssize_t nstmts = 0;
    while (SQL_STATEMENTS[nstmts]) nstmts++;
    PyObject *stmts = PyTuple_New(nstmts);
    for (Py_ssize_t i = 0; stmts && i < nstmts; i++)
        PyTuple_SET_ITEM(stmts, i, PyUnicode_FromString(SQL_STATEMENTS[i]));
    for (int k = 0; k < NKINDS; k++) {
        PyTuple_SET_ITEM(w, k, PyLong_FromLong(WEIGHTS[k]));
        PyTuple_SET_ITEM(names, k, PyUnicode_FromString(NAMES[k]));
    }
    Py_INCREF(&TerminalType);
    Py_INCREF(&ProcLoopType);
    if (PyModule_AddObject(m, "Terminal", (PyObject *)&TerminalType) < 0 ||
        PyModule_AddObject(m, "ProcLoop", (PyObject *)&ProcLoopType) < 0 ||
        PyModule_AddObject(m, "WEIGHTS", w) < 0 || PyModule_AddObject(m, "NAMES", names) < 0 ||
        PyModule_AddObject(m, "SQL_STATEMENTS", stmts) < 0 ||
        PyModule_AddObject(m, "KEYING_S", doubles(KEYING_S, NKINDS)) < 0 ||
        PyModule_AddObject(m, "THINK_MEAN_S", doubles(THINK_MEAN_S, NKINDS)) < 0 ||
        PyModule_AddObject(m, "THINK_CAP", PyFloat_FromDouble(THINK_CAP)) < 0 ||
        PyModule_AddIntConstant(m, "DECK_SIZE", DECK_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "NOT_AN_ITEM", NOT_AN_ITEM) < 0 ||
        PyModule_AddIntConstant(m, "BOUNDARY", EV_BOUNDARY) < 0 ||
        PyModule_AddIntConstant(m, "FINISHED", EV_FINISHED) < 0 ||
        PyModule_AddIntConstant(m, "SAMPLES", EV_SAMPLES) < 0 ||
        PyModule_AddIntConstant(m, "FAILED", EV_FAILED) < 0 ||
        PyModule_AddIntConstant(m, "STOPPED", EV_STOPPED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
