/* The per-class lists of the element's properties and of cudanms-tool's
 * options (cudanms_static.h, cnms_class_list): one parser, one rule for
 * each list, and the cnms_class_params they give. A label is looked up
 * through the caller's cnms_class_labels: no label file here. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front.h"

/* The blanks trimmed at both ends of an item, a key and a value. */
static int
is_blank (char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f'
      || c == '\r';
}

static char *
strip (char *s)
{
  char *end;

  while (is_blank (*s))
    s++;
  end = s + strlen (s);
  while (end > s && is_blank (end[-1]))
    end--;
  *end = '\0';
  return s;
}

static cnms_status
fail (char *err, size_t size, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;

static cnms_status
fail (char *err, size_t size, const char *fmt, ...)
{
  va_list ap;

  if (err != NULL && size > 0) {
    va_start (ap, fmt);
    vsnprintf (err, size, fmt, ap);
    va_end (ap);
  }
  return CNMS_ERR_INVALID_ARG;
}

/* s as a double the way C's "C" locale reads it, whatever the process's
 * locale (a decimal point, never a comma); *end after it, errno as
 * strtod leaves it. */
static double
c_strtod (const char *s, char **end)
{
  locale_t c = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  locale_t old;
  double v;
  int e;

  if (c == (locale_t) 0) {
    errno = 0;
    return strtod (s, end);
  }
  old = uselocale (c);
  errno = 0;
  v = strtod (s, end);
  e = errno;
  uselocale (old);
  freelocale (c);
  errno = e;
  return v;
}

/* A key of digits: its class id, in [0, CNMS_MAX_CLASS_PARAMS); else
 * -1. */
static int
parse_id (const char *key)
{
  long v = 0;

  if (*key == '\0')
    return -1;
  for (; *key != '\0'; key++) {
    if (*key < '0' || *key > '9')
      return -1;
    v = v * 10 + (*key - '0');
    if (v >= CNMS_MAX_CLASS_PARAMS)
      return -1;
  }
  return (int) v;
}

/* The value v of class key into *out, in the range of its kind of list. */
static cnms_status
parse_value (cnms_class_list_kind kind, const char *key, const char *v,
    double *out, char *err, size_t size)
{
  char *end;
  double x;

  x = c_strtod (v, &end);
  if (v[0] == '\0' || *end != '\0' || isnan (x))
    return fail (err, size, "the value '%s' of class '%s' is not a number",
        v, key);
  if (errno == ERANGE)
    return fail (err, size, "the value '%s' of class '%s' is out of range",
        v, key);
  switch (kind) {
    case CNMS_CLASS_LIST_THRESHOLDS:
      if (!(x >= 0.0 && x <= 1.0))
        return fail (err, size, "the score threshold %s of class '%s' is "
            "outside [0, 1]", v, key);
      break;
    case CNMS_CLASS_LIST_IOUS:
      if (!(x >= 0.0 && x <= 1.0))
        return fail (err, size, "the iou %s of class '%s' is outside "
            "[0, 1]", v, key);
      break;
    default:
      if (!(x >= 0.0 && x <= 2147483647.0) || x != floor (x))
        return fail (err, size, "the cap %s of class '%s' is not an integer "
            "in [0, 2147483647]", v, key);
      break;
  }
  *out = x;
  return CNMS_OK;
}

/* An entry and its place in the list, sorted by (id, key, place): the
 * order in which the check for a class given twice walks a list. */
typedef struct
{
  int id, place;
  const char *key;
} entry_ref;

static int
entry_order (const void *a, const void *b)
{
  const entry_ref *x = a, *y = b;
  int c;

  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  c = x->id < 0 ? strcmp (x->key, y->key) : 0;
  if (c != 0)
    return c;
  return x->place - y->place;
}

/* Refuses a class that l names twice: the same key twice (an id, or a
 * label before it is looked up), or two keys of one id. */
static cnms_status
check_twice (const cnms_class_list *l, char *err, size_t size)
{
  entry_ref *refs;
  int i;

  if (l->n < 2)
    return CNMS_OK;
  refs = malloc ((size_t) l->n * sizeof *refs);
  if (refs == NULL)
    return fail (err, size, "out of memory for %d classes", l->n);
  for (i = 0; i < l->n; i++) {
    refs[i].id = l->entries[i].id;
    refs[i].place = i;
    refs[i].key = l->entries[i].key;
  }
  qsort (refs, (size_t) l->n, sizeof *refs, entry_order);
  for (i = 1; i < l->n; i++) {
    const entry_ref *a = &refs[i - 1], *b = &refs[i];
    cnms_status st;

    if (a->id != b->id || (a->id < 0 && strcmp (a->key, b->key) != 0))
      continue;
    if (strcmp (a->key, b->key) == 0)
      st = fail (err, size, "class '%s' is given twice", a->key);
    else
      st = fail (err, size, "'%s' and '%s' are both class %d", a->key,
          b->key, a->id);
    free (refs);
    return st;
  }
  free (refs);
  return CNMS_OK;
}

void
cnms_class_list_clear (cnms_class_list *l)
{
  if (l == NULL)
    return;
  free (l->entries);
  free (l->keys);
  memset (l, 0, sizeof *l);
}

cnms_status
cnms_class_list_parse (cnms_class_list *l, cnms_class_list_kind kind,
    const char *text, char *err, size_t size)
{
  const int valued = kind <= CNMS_CLASS_LIST_MAX_DETECTIONS;
  cnms_class_list n;
  char *item, *stripped;
  size_t items = 1;
  const char *s;
  cnms_status st;

  if (err != NULL && size > 0)
    err[0] = '\0';
  if (l == NULL || kind < 0 || kind >= CNMS_N_CLASS_LISTS)
    return fail (err, size, "no list to parse into");
  memset (&n, 0, sizeof n);
  n.kind = kind;
  if (text == NULL)
    goto done;
  for (s = text; *s != '\0'; s++)
    items += *s == ',';
  n.keys = malloc (strlen (text) + 1);
  n.entries = malloc (items * sizeof *n.entries);
  if (n.keys == NULL || n.entries == NULL) {
    cnms_class_list_clear (&n);
    return fail (err, size, "out of memory for a list of %zu classes",
        items);
  }
  strcpy (n.keys, text);
  stripped = strip (n.keys);
  if (stripped[0] == '\0') {
    /* empty or blank: the list is unset */
    cnms_class_list_clear (&n);
    n.kind = kind;
    goto done;
  }
  for (item = stripped; item != NULL;) {
    char *comma = strchr (item, ','), *eq, *key;
    cnms_class_entry *e = &n.entries[n.n];

    if (comma != NULL)
      *comma = '\0';
    key = strip (item);
    eq = strchr (key, '=');
    if (valued != (eq != NULL)) {
      st = fail (err, size, valued ? "'%s' is not CLASS=VALUE" : "'%s' is "
          "not a class (an id or a label, without a value)", key);
      goto failed;
    }
    e->value = 0.0;
    if (eq != NULL) {
      const char *v;

      *eq = '\0';
      v = strip (eq + 1);
      key = strip (key);
      st = parse_value (kind, key, v, &e->value, err, size);
      if (st != CNMS_OK)
        goto failed;
    }
    if (key[0] == '\0') {
      st = fail (err, size, "an empty class in '%s'", text);
      goto failed;
    }
    e->key = key;
    e->id = -1;
    if (key[0] >= '0' && key[0] <= '9') {
      e->id = parse_id (key);
      if (e->id < 0) {
        st = fail (err, size, "class id '%s' is not an integer in [0, %d)",
            key, CNMS_MAX_CLASS_PARAMS);
        goto failed;
      }
    }
    n.n++;
    item = comma != NULL ? comma + 1 : NULL;
  }
  st = check_twice (&n, err, size);
  if (st != CNMS_OK)
    goto failed;
done:
  cnms_class_list_clear (l);
  *l = n;
  return CNMS_OK;

failed:
  cnms_class_list_clear (&n);
  return st;
}

cnms_status
cnms_class_list_resolve (cnms_class_list *l, const cnms_class_labels *labels,
    char *err, size_t size)
{
  int i;

  if (err != NULL && size > 0)
    err[0] = '\0';
  if (l == NULL)
    return fail (err, size, "no list to resolve");
  for (i = 0; i < l->n; i++) {
    cnms_class_entry *e = &l->entries[i];
    int lines[2] = { -1, -1 }, found;

    if (e->key[0] >= '0' && e->key[0] <= '9')
      continue;                 /* an id */
    e->id = -1;
    if (labels == NULL || labels->find == NULL)
      return fail (err, size, "class '%s' is not an id in [0, %d), and "
          "without a label file a class is its id", e->key,
          CNMS_MAX_CLASS_PARAMS);
    found = labels->find (labels->data, e->key, lines);
    if (found <= 0 || lines[0] < 0)
      return fail (err, size, "the label file has no class '%s' (%d "
          "labels)", e->key, labels->n_labels);
    if (found > 1)
      return fail (err, size, "the label '%s' is on lines %d and %d of the "
          "label file (classes %d and %d): give its class id", e->key,
          lines[0] + 1, lines[1] + 1, lines[0], lines[1]);
    e->id = lines[0];
  }
  return check_twice (l, err, size);
}

int
cnms_class_lists_size (const cnms_class_list lists[CNMS_N_CLASS_LISTS])
{
  int k, i, top = -1;

  for (k = 0; k < CNMS_N_CLASS_LISTS; k++) {
    for (i = 0; i < lists[k].n; i++) {
      if (lists[k].entries[i].id > top)
        top = lists[k].entries[i].id;
    }
  }
  return top + 1;
}

int
cnms_class_lists_fill (const cnms_class_list lists[CNMS_N_CLASS_LISTS],
    const cnms_params *p, cnms_class_params *c, int n)
{
  const cnms_class_list *keep = &lists[CNMS_CLASS_LIST_KEEP];
  int k, i;

  /* with a keep list, a class it does not list holds NaN until the end
   * (+infinity then), so that no threshold of its own lets it back in */
  for (i = 0; i < n; i++) {
    cnms_class_params_init (&c[i], p);
    if (keep->n > 0)
      c[i].score_threshold = NAN;
  }
  for (i = 0; i < keep->n; i++) {
    int id = keep->entries[i].id;

    if (id >= 0 && id < n)
      c[id].score_threshold = p->score_threshold;
  }
  for (k = 0; k < CNMS_N_CLASS_LISTS; k++) {
    for (i = 0; i < lists[k].n; i++) {
      const cnms_class_entry *e = &lists[k].entries[i];

      if (e->id < 0 || e->id >= n)
        continue;               /* a label not looked up */
      switch ((cnms_class_list_kind) k) {
        case CNMS_CLASS_LIST_THRESHOLDS:
          if (!isnan (c[e->id].score_threshold))
            c[e->id].score_threshold = (float) e->value;
          break;
        case CNMS_CLASS_LIST_IOUS:
          c[e->id].iou = (float) e->value;
          break;
        case CNMS_CLASS_LIST_MAX_DETECTIONS:
          c[e->id].max_detections = (int) e->value;
          break;
        default:
          break;
      }
    }
  }
  for (i = 0; i < lists[CNMS_CLASS_LIST_DROP].n; i++) {
    int id = lists[CNMS_CLASS_LIST_DROP].entries[i].id;

    if (id >= 0 && id < n)
      c[id].score_threshold = NAN;
  }
  for (i = 0; i < n; i++) {
    if (isnan (c[i].score_threshold))
      c[i].score_threshold = INFINITY;
  }
  return keep->n > 0;
}
