/* cudanms-tool: runs the cudanms library on .npy files, for the golden
 * tests and for debugging. Every failure is one line on stderr and exit
 * code 2. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cudanms_static.h"
#include "cnms_npy.h"

#define EXIT_USAGE 2

/* The usage, in two parts around the list of layouts (print_usage). */
static const char usage_head[] =
    "usage:\n"
    "  cudanms-tool nms --boxes B.npy --scores S.npy [--classes C.npy]\n"
    "      --iou T [--class-agnostic] [--max-detections K]\n"
    "      [--backend cpu|cuda] --out KEEP.npy\n"
    "    B float32 [N,4] x1 y1 x2 y2, or [N,5] cx cy w h angle (oriented\n"
    "    boxes, radians: cnms_nms_rotated), S float32 [N], C int32/int64\n"
    "    [N]; KEEP int64 [K]: input indices in kept order (every kept box\n"
    "    unless --max-detections is given, as torchvision).\n"
    "  cudanms-tool nms --boxes P.npy --scores S.npy --lane-distance D\n"
    "      [--max-detections K] [--backend cpu|cuda] --out KEEP.npy\n"
    "    P float32 [N,5+S] LaneATT lane proposals (S >= 2), D in model\n"
    "    pixels: lane NMS (cnms_nms_lanes).\n"
    "  cudanms-tool decode --tensor T.npy\n";
static const char usage_tail[] =
    "      --model-size WxH --frame-size WxH [--letterbox]\n"
    "      --score-threshold S --iou T [--class-agnostic]\n"
    "      [--max-detections K] [--max-candidates M] [--backend cpu|cuda]\n"
    "      [--class-score-thresholds ID=S,...] [--class-ious ID=T,...]\n"
    "      [--class-max-detections ID=K,...] [--keep-classes ID,...]\n"
    "      [--drop-classes ID,...] [--min-width W] [--min-height H]\n"
    "      [--max-detections-per-class K]\n"
    "    T float32/float16 [1,N,5+C], [1,4+C,N], [1,K,6] or [1,4+C+1,N]\n"
    "    (yolov8-obb); prints one JSON line per detection: x y w h\n"
    "    confidence label_id (frame pixels), or for oriented boxes cx cy w\n"
    "    h angle confidence label_id; at most 300 unless --max-detections\n"
    "    is given. --layout laneatt ([1,N,5+S]) takes --lane-distance D\n"
    "    instead of --iou and prints confidence, anchor, x y w h and the\n"
    "    lane's points. A value that is NaN or infinite prints as null.\n"
    "    --layout yolov8-pose ([1,5+K*D,N]; [--keypoint-dims 2|3], default\n"
    "    3) adds \"keypoints\": [[x, y, score], ...] (frame pixels; score\n"
    "    null for D = 2). --layout yolov8-seg ([1,4+C+M,N]) takes\n"
    "    --protos P.npy ([1,M,Hp,Wp], the tensor's dtype) and adds\n"
    "    \"mask\": its rectangle x y w h (frame pixels), offset, the count\n"
    "    of set pixels and their FNV-1a 64 hash (hex); --masks-out M.npy\n"
    "    writes every mask's bytes (uint8 0/1, row-major) one after the\n"
    "    other, mask k at its offset.\n"
    "    A tensor [B,...] of B > 1 frames (prototypes [B,M,Hp,Wp]) is\n"
    "    decoded in one call (cnms_detect_batch), every frame of the\n"
    "    --frame-size; each line starts with \"frame\": its index.\n"
    "  cudanms-tool tiles --tensor T.npy --slice-size WxH\n"
    "      [--slice-overlap F] [--slice-full-frame]\n"
    "      [--merge greedy-nmm|nmm|nms] [--merge-metric ios|iou]\n"
    "      [--merge-threshold T] [--merge-class-agnostic]\n"
    "      [--merge-rules sahi|consistent]\n"
    "      and decode's options (--frame-size: the whole frame)\n"
    "    T [B,...] of a layout of boxes (yolov8, yolov5, end2end): slice i\n"
    "    of the frame's grid of WxH slices overlapping by F (default 0.2)\n"
    "    of a slice on each axis (SAHI's get_slice_bboxes), and with\n"
    "    --slice-full-frame the whole frame last; B must be their count.\n"
    "    Each slice decoded as a frame of its size, its records shifted\n"
    "    into the frame and merged as SAHI merges them (default\n"
    "    greedy-nmm, ios, 0.5, each class alone): one JSON line per\n"
    "    merged detection, x y w h confidence label_id (frame pixels) and\n"
    "    the anchor (the keeping record among the slices' records).\n"
    "  K and M are integers >= 1 in both commands. Per class (decode): a\n"
    "    score threshold in [0, 1], a class-aware IoU in [0, 1], a cap\n"
    "    (0: none), keep only or drop classes; a list names each class\n"
    "    once, and an empty list is no list (the element's rules); W and\n"
    "    H: the least box, in frame pixels.\n"
    "  cudanms-tool --help\n";

/* The usage's lines are at most this long. */
#define USAGE_WIDTH 72

static void die (const char *fmt, ...)
#ifdef __GNUC__
    __attribute__ ((format (printf, 1, 2), noreturn))
#endif
    ;

static void
die (const char *fmt, ...)
{
  va_list ap;

  fputs ("cudanms-tool: error: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (EXIT_USAGE);
}

/* Output that did not reach its file is a failure (a full disk, a closed
 * pipe): the exit code must say so. */
static void
finish_stdout (void)
{
  if (fflush (stdout) != 0 || ferror (stdout))
    die ("cannot write the output: %s", strerror (errno));
}

/* The names of the library's layouts (cnms_layout_info), in enum order,
 * into names[CNMS_N_LAYOUTS]; returns their count. */
static int
layout_names (const char **names)
{
  int l, n = 0;

  for (l = 0; l < CNMS_N_LAYOUTS; l++) {
    const cnms_layout_desc *d = cnms_layout_info ((cnms_layout) l);

    if (d != NULL && d->name != NULL)
      names[n++] = d->name;
  }
  return n;
}

/* The usage on stdout, with "[--layout A|B|...]" from the library's table
 * of layouts, wrapped at USAGE_WIDTH under the first name. */
static void
print_usage (void)
{
  static const char head[] = "      [--layout ";
  const size_t indent = sizeof head - 1;
  const char *names[CNMS_N_LAYOUTS];
  size_t col = indent;
  int n = layout_names (names), i;

  fputs (usage_head, stdout);
  fputs (head, stdout);
  for (i = 0; i < n; i++) {
    size_t len = strlen (names[i]) + 1;

    if (col > indent && col + len > USAGE_WIDTH) {
      printf ("\n%*s", (int) indent, "");
      col = indent;
    }
    printf ("%s%c", names[i], i + 1 < n ? '|' : ']');
    col += len;
  }
  fputs ("\n", stdout);
  fputs (usage_tail, stdout);
  finish_stdout ();
}

typedef struct {
  const char *boxes, *scores, *classes, *out, *tensor;
  const char *protos, *masks_out;
  const char *backend;
  cnms_layout layout;
  int have_iou, have_score, have_model, have_frame, have_max_det;
  int have_lane_distance;
  cnms_params p;
  /* per-class options as given, resolved once every option is read */
  const char *class_thr, *class_iou, *class_max, *keep, *drop;
  /* tiles */
  int slice_w, slice_h, full_frame, have_slice;
  double overlap;
  cnms_merge_params merge;
} options;

/* "float32 [10, 5]": an array's dtype and shape, for a message. */
static const char *
array_text (const cnms_npy *a, char *buf, size_t size)
{
  size_t len;
  int i;

  snprintf (buf, size, "%s [", cnms_npy_dtype_name (a->dtype));
  for (i = 0; i < a->n_dims; i++) {
    len = strlen (buf);
    snprintf (buf + len, size - len, "%s%lld", i ? ", " : "",
        (long long) a->dims[i]);
  }
  len = strlen (buf);
  snprintf (buf + len, size - len, "]");
  return buf;
}

static double
parse_double (const char *opt, const char *s)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (s, &end);
  if (end == s || *end != '\0' || isnan (v))
    die ("%s: '%s' is not a number", opt, s);
  /* a number too large or too small for a double (1e999, 1e-400) */
  if (errno == ERANGE)
    die ("%s: '%s' is out of range", opt, s);
  return v;
}

static int
parse_int (const char *opt, const char *s)
{
  char *end;
  long v;

  errno = 0;
  v = strtol (s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < -2147483647L
      || v > 2147483647L)
    die ("%s: '%s' is not an integer", opt, s);
  return (int) v;
}

static void
parse_size (const char *opt, const char *s, int *w, int *h)
{
  if (cnms_parse_size (s, w, h) != CNMS_OK)
    die ("%s: '%s' is not WIDTHxHEIGHT with sizes in [1, %d]", opt, s,
        CNMS_SIZE_MAX);
}

/* The layout named s (the library's table); else exits naming them all:
 * "a, b or c". */
static cnms_layout
parse_layout (const char *s)
{
  const char *names[CNMS_N_LAYOUTS];
  char text[512] = "";
  int l = cnms_layout_from_name (s), n, i;

  if (l >= 0)
    return (cnms_layout) l;
  n = layout_names (names);
  for (i = 0; i < n; i++) {
    size_t len = strlen (text);

    snprintf (text + len, sizeof text - len, "%s%s",
        i == 0 ? "" : i + 1 < n ? ", " : " or ", names[i]);
  }
  die ("--layout: '%s' is not %s", s, text);
}

static void
parse_args (int argc, char **argv, options *o)
{
  int i;

  memset (o, 0, sizeof *o);
  cnms_params_init (&o->p);
  cnms_merge_params_init (&o->merge);
  o->overlap = 0.2;
  o->p.letterbox = 0;
  o->backend = "cpu";
  for (i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;

    if (strcmp (a, "--class-agnostic") == 0) {
      o->p.class_agnostic = 1;
      takes = 0;
    } else if (strcmp (a, "--letterbox") == 0) {
      o->p.letterbox = 1;
      takes = 0;
    } else if (strcmp (a, "--slice-full-frame") == 0) {
      o->full_frame = 1;
      takes = 0;
    } else if (strcmp (a, "--merge-class-agnostic") == 0) {
      o->merge.class_agnostic = 1;
      takes = 0;
    } else if (strcmp (a, "--help") == 0 || strcmp (a, "-h") == 0) {
      print_usage ();
      exit (0);
    } else if (strncmp (a, "--", 2) != 0) {
      die ("unexpected argument '%s' (see --help)", a);
    } else if (v == NULL) {
      die ("%s needs a value (see --help)", a);
    } else if (strcmp (a, "--boxes") == 0) {
      o->boxes = v;
    } else if (strcmp (a, "--scores") == 0) {
      o->scores = v;
    } else if (strcmp (a, "--classes") == 0) {
      o->classes = v;
    } else if (strcmp (a, "--out") == 0) {
      o->out = v;
    } else if (strcmp (a, "--tensor") == 0) {
      o->tensor = v;
    } else if (strcmp (a, "--protos") == 0) {
      o->protos = v;
    } else if (strcmp (a, "--masks-out") == 0) {
      o->masks_out = v;
    } else if (strcmp (a, "--keypoint-dims") == 0) {
      o->p.keypoint_dims = parse_int (a, v);
      if (o->p.keypoint_dims != 2 && o->p.keypoint_dims != 3)
        die ("--keypoint-dims: must be 2 or 3");
    } else if (strcmp (a, "--backend") == 0) {
      if (strcmp (v, "cpu") != 0 && strcmp (v, "cuda") != 0)
        die ("--backend: '%s' is not cpu or cuda", v);
      o->backend = v;
    } else if (strcmp (a, "--layout") == 0) {
      o->layout = parse_layout (v);
    } else if (strcmp (a, "--iou") == 0) {
      double t = parse_double (a, v);
      if (t < 0.0 || t > 1.0)
        die ("--iou: %s is outside [0, 1]", v);
      o->p.iou = (float) t;
      o->have_iou = 1;
    } else if (strcmp (a, "--lane-distance") == 0) {
      double d = parse_double (a, v);
      if (!(d >= 0.0) || d > 3.4e38)
        die ("--lane-distance: %s is not a distance >= 0", v);
      o->p.lane_distance = (float) d;
      o->have_lane_distance = 1;
    } else if (strcmp (a, "--score-threshold") == 0) {
      o->p.score_threshold = (float) parse_double (a, v);
      o->have_score = 1;
    } else if (strcmp (a, "--max-detections") == 0) {
      o->p.max_detections = parse_int (a, v);
      if (o->p.max_detections < 1)
        die ("--max-detections: must be >= 1 (leave it out for no cap in "
            "nms)");
      o->have_max_det = 1;
    } else if (strcmp (a, "--max-candidates") == 0) {
      o->p.max_candidates = parse_int (a, v);
      if (o->p.max_candidates < 1)
        die ("--max-candidates: must be >= 1");
    } else if (strcmp (a, "--model-size") == 0) {
      parse_size (a, v, &o->p.model_width, &o->p.model_height);
      o->have_model = 1;
    } else if (strcmp (a, "--frame-size") == 0) {
      parse_size (a, v, &o->p.frame_width, &o->p.frame_height);
      o->have_frame = 1;
    } else if (strcmp (a, "--class-score-thresholds") == 0) {
      o->class_thr = v;
    } else if (strcmp (a, "--class-ious") == 0) {
      o->class_iou = v;
    } else if (strcmp (a, "--class-max-detections") == 0) {
      o->class_max = v;
    } else if (strcmp (a, "--keep-classes") == 0) {
      o->keep = v;
    } else if (strcmp (a, "--drop-classes") == 0) {
      o->drop = v;
    } else if (strcmp (a, "--max-detections-per-class") == 0) {
      o->p.max_detections_per_class = parse_int (a, v);
      if (o->p.max_detections_per_class < 0)
        die ("--max-detections-per-class: must be >= 0 (0: no cap)");
    } else if (strcmp (a, "--min-width") == 0) {
      o->p.min_width = (float) parse_double (a, v);
    } else if (strcmp (a, "--min-height") == 0) {
      o->p.min_height = (float) parse_double (a, v);
    } else if (strcmp (a, "--slice-size") == 0) {
      parse_size (a, v, &o->slice_w, &o->slice_h);
      o->have_slice = 1;
    } else if (strcmp (a, "--slice-overlap") == 0) {
      o->overlap = parse_double (a, v);
      if (!(o->overlap >= 0.0 && o->overlap < 1.0))
        die ("--slice-overlap: %s is outside [0, 1)", v);
    } else if (strcmp (a, "--merge") == 0) {
      if (strcmp (v, "greedy-nmm") == 0)
        o->merge.rule = CNMS_MERGE_GREEDY_NMM;
      else if (strcmp (v, "nmm") == 0)
        o->merge.rule = CNMS_MERGE_NMM;
      else if (strcmp (v, "nms") == 0)
        o->merge.rule = CNMS_MERGE_NMS;
      else
        die ("--merge: '%s' is not greedy-nmm, nmm or nms", v);
    } else if (strcmp (a, "--merge-metric") == 0) {
      if (strcmp (v, "ios") == 0)
        o->merge.metric = CNMS_MATCH_IOS;
      else if (strcmp (v, "iou") == 0)
        o->merge.metric = CNMS_MATCH_IOU;
      else
        die ("--merge-metric: '%s' is not ios or iou", v);
    } else if (strcmp (a, "--merge-rules") == 0) {
      if (strcmp (v, "sahi") == 0)
        o->merge.rules = CNMS_MERGE_RULES_SAHI;
      else if (strcmp (v, "consistent") == 0)
        o->merge.rules = CNMS_MERGE_RULES_CONSISTENT;
      else
        die ("--merge-rules: '%s' is not sahi or consistent", v);
    } else if (strcmp (a, "--merge-threshold") == 0) {
      o->merge.threshold = parse_double (a, v);
      if (!(o->merge.threshold >= 0.0 && o->merge.threshold <= 1.0))
        die ("--merge-threshold: %s is outside [0, 1]", v);
    } else {
      die ("unknown option '%s' (see --help)", a);
    }
    i += takes;
  }
}

static cnms_ctx *
open_ctx (const char *backend)
{
  cnms_ctx *ctx = NULL;
  cnms_status st;

  if (strcmp (backend, "cuda") == 0) {
    if (!HAVE_CUDA)
      die ("--backend cuda: cudanms was built without CUDA");
    if (cnms_cuda_device_count () == 0)
      die ("--backend cuda: no CUDA device is available");
    st = cnms_ctx_new (CNMS_BACKEND_CUDA, -1, &ctx);
  } else {
    st = cnms_ctx_new (CNMS_BACKEND_CPU, -1, &ctx);
  }
  if (st != CNMS_OK)
    die ("cannot create a %s context: %s", backend, cnms_status_str (st));
  return ctx;
}

static void
read_npy (const char *path, cnms_npy *a)
{
  char err[512];

  if (cnms_npy_read (path, a, err, sizeof err) != 0)
    die ("%s", err);
}

static int
run_nms (const options *o)
{
  cnms_npy boxes, scores, classes;
  char text[160];
  int32_t *cls = NULL;
  int64_t *keep;
  int64_t dims[1];
  int n, n_keep, i;
  cnms_ctx *ctx;
  cnms_status st;
  char err[512];

  if (o->boxes == NULL || o->scores == NULL || o->out == NULL)
    die ("nms needs --boxes, --scores and --out (see --help)");
  if (!o->have_iou && !o->have_lane_distance)
    die ("nms needs --iou (or --lane-distance for lanes)");
  if (o->have_iou && o->have_lane_distance)
    die ("nms takes --iou (boxes) or --lane-distance (lanes), not both");

  read_npy (o->boxes, &boxes);
  if (o->have_lane_distance) {
    if (boxes.dtype != CNMS_NPY_F4 || boxes.n_dims != 2 || boxes.dims[1] < 7)
      die ("%s: lane proposals must be float32 [N,5+S] with S >= 2, got %s",
          o->boxes, array_text (&boxes, text, sizeof text));
  } else if (boxes.dtype != CNMS_NPY_F4 || boxes.n_dims != 2
      || (boxes.dims[1] != 4 && boxes.dims[1] != 5)) {
    die ("%s: boxes must be float32 [N,4] or [N,5], got %s", o->boxes,
        array_text (&boxes, text, sizeof text));
  }
  if (boxes.dims[0] > 0x7fffffff)
    die ("%s: too many boxes", o->boxes);
  n = (int) boxes.dims[0];
  read_npy (o->scores, &scores);
  if (scores.dtype != CNMS_NPY_F4 || scores.n_dims != 1
      || scores.dims[0] != n)
    die ("%s: scores must be float32 [%d], got %s", o->scores, n,
        array_text (&scores, text, sizeof text));
  if (o->classes != NULL) {
    read_npy (o->classes, &classes);
    if ((classes.dtype != CNMS_NPY_I4 && classes.dtype != CNMS_NPY_I8)
        || classes.n_dims != 1 || classes.dims[0] != n)
      die ("%s: classes must be int32 or int64 [%d], got %s", o->classes, n,
          array_text (&classes, text, sizeof text));
    if (classes.dtype == CNMS_NPY_I4) {
      cls = classes.data;
    } else {
      const int64_t *c64 = classes.data;
      cls = malloc ((size_t) n * sizeof *cls + 1);
      if (cls == NULL)
        die ("out of memory");
      for (i = 0; i < n; i++) {
        if (c64[i] < INT32_MIN || c64[i] > INT32_MAX)
          die ("%s: class id %lld does not fit in int32", o->classes,
              (long long) c64[i]);
        cls[i] = (int32_t) c64[i];
      }
    }
  }

  keep = malloc ((size_t) n * sizeof *keep + 1);
  if (keep == NULL)
    die ("out of memory");
  ctx = open_ctx (o->backend);
  /* Like torchvision, nms keeps everything unless told otherwise. */
  if (o->have_lane_distance)
    st = cnms_nms_lanes (ctx, boxes.data, (int) boxes.dims[1] - 5,
        scores.data, n, o->p.lane_distance,
        o->have_max_det ? o->p.max_detections : 0, keep, &n_keep);
  else
    st = (boxes.dims[1] == 5 ? cnms_nms_rotated : cnms_nms) (ctx,
        boxes.data, scores.data, cls, n, o->p.iou, o->p.class_agnostic,
        o->have_max_det ? o->p.max_detections : 0, keep, &n_keep);
  if (st != CNMS_OK)
    die ("nms failed: %s: %s", cnms_status_str (st), cnms_ctx_error (ctx));
  dims[0] = n_keep;
  if (cnms_npy_write (o->out, CNMS_NPY_I8, 1, dims, keep, err,
          sizeof err) != 0)
    die ("%s", err);
  cnms_ctx_free (ctx);
  free (keep);
  if (o->classes != NULL && classes.dtype != CNMS_NPY_I4)
    free (cls);
  if (o->classes != NULL)
    cnms_npy_clear (&classes);
  cnms_npy_clear (&scores);
  cnms_npy_clear (&boxes);
  return 0;
}

/* The per-class options into p, by the lists' one parser and rule
 * (cudanms_static.h): classes allocated here (NULL without any). An
 * empty option is an unset one; a class is an id (no label file here). */
static cnms_class_params *
resolve_classes (options *o)
{
  const char *opts[CNMS_N_CLASS_LISTS] = { o->class_thr, o->class_iou,
    o->class_max, o->keep, o->drop
  };
  static const char *const names[CNMS_N_CLASS_LISTS] = {
    "--class-score-thresholds", "--class-ious", "--class-max-detections",
    "--keep-classes", "--drop-classes"
  };
  cnms_class_list lists[CNMS_N_CLASS_LISTS];
  cnms_class_params *c;
  char err[512];
  int k, n;

  memset (lists, 0, sizeof lists);
  for (k = 0; k < CNMS_N_CLASS_LISTS; k++) {
    if (cnms_class_list_parse (&lists[k], (cnms_class_list_kind) k, opts[k],
            err, sizeof err) != CNMS_OK
        || cnms_class_list_resolve (&lists[k], NULL, err,
            sizeof err) != CNMS_OK)
      die ("%s: %s", names[k], err);
  }
  n = cnms_class_lists_size (lists);
  c = NULL;
  if (n > 0) {
    c = calloc ((size_t) n, sizeof *c);
    if (c == NULL)
      die ("out of memory for %d classes", n);
    o->p.other_classes_filtered = cnms_class_lists_fill (lists, &o->p, c, n);
    o->p.classes = c;
    o->p.n_classes = n;
  }
  for (k = 0; k < CNMS_N_CLASS_LISTS; k++)
    cnms_class_list_clear (&lists[k]);
  return c;
}

/* The values of kept record i in the payload pl. */
static const void *
payload_at (const cnms_payloads *pl, int i)
{
  return pl->data + pl->records[i].offset;
}

/* The frame of the records printed now ([B, ...] tensors), or -1. */
static int print_frame = -1;

/* The start of a record's JSON line: "{", and its frame in a batch. */
static void
print_open (void)
{
  if (print_frame >= 0)
    printf ("{\"frame\": %d, ", print_frame);
  else
    printf ("{");
}

/* A float of a JSON line: "%.9g", or null for NaN and +-infinity, which
 * JSON has no number for. */
static void
print_num (double v)
{
  if (isfinite (v))
    printf ("%.9g", v);
  else
    fputs ("null", stdout);
}

/* "x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1 (float32 differences). */
static void
print_xywh (const cnms_det *d)
{
  printf ("\"x\": ");
  print_num (d->x1);
  printf (", \"y\": ");
  print_num (d->y1);
  printf (", \"w\": ");
  print_num ((double) (d->x2 - d->x1));
  printf (", \"h\": ");
  print_num ((double) (d->y2 - d->y1));
}

/* The JSON line of kept lane i: its score, proposal index, rectangle and
 * points (frame pixels, the bottom row first, rows without a point left
 * out). */
static void
print_lane (const cnms_det *d, const cnms_payloads *pl, int i)
{
  const cnms_payload *r = &pl->records[i];
  const float *pts = payload_at (pl, i);
  const char *sep = "";
  int j;

  print_open ();
  printf ("\"confidence\": ");
  print_num (d->score);
  printf (", \"anchor\": %d, ", (int) d->anchor);
  print_xywh (d);
  printf (", \"points\": [");
  for (j = 0; j < r->n_points; j++) {
    const float *p = pts + (size_t) r->point_dims * j;
    if (p[0] != p[0])
      continue;
    printf ("%s[", sep);
    print_num (p[0]);
    printf (", ");
    print_num (p[1]);
    printf ("]");
    sep = ", ";
  }
  printf ("]}\n");
}

/* An .npy array (float32 or float16) as a host tensor. */
static void
npy_tensor (const char *path, const cnms_npy *a, cnms_tensor *t)
{
  int i;

  if (a->dtype != CNMS_NPY_F4 && a->dtype != CNMS_NPY_F2)
    die ("%s: tensor must be float32 or float16, got %s", path,
        cnms_npy_dtype_name (a->dtype));
  if (a->n_dims > CNMS_MAX_DIMS)
    die ("%s: tensor has too many dims", path);
  memset (t, 0, sizeof *t);
  t->data = a->data;
  t->size = a->size;
  t->dtype = a->dtype == CNMS_NPY_F4 ? CNMS_DTYPE_FLOAT32 : CNMS_DTYPE_FLOAT16;
  t->n_dims = a->n_dims;
  for (i = 0; i < a->n_dims; i++)
    t->dims[i] = a->dims[i];
}

/* The box of a record as decode prints it (no closing brace). */
static void
print_box (const cnms_det *d)
{
  print_open ();
  print_xywh (d);
  printf (", \"confidence\": ");
  print_num (d->score);
  printf (", \"label_id\": %d", (int) d->class_id);
}

/* The JSON line of an oriented box. */
static void
print_oriented (const cnms_det *d)
{
  print_open ();
  printf ("\"cx\": ");
  print_num (d->cx);
  printf (", \"cy\": ");
  print_num (d->cy);
  printf (", \"w\": ");
  print_num (d->w);
  printf (", \"h\": ");
  print_num (d->h);
  printf (", \"angle\": ");
  print_num (d->angle);
  printf (", \"confidence\": ");
  print_num (d->score);
  printf (", \"label_id\": %d}\n", (int) d->class_id);
}

/* ", \"keypoints\": [[x, y, score], ...]" of kept record i. */
static void
print_keypoints (const cnms_payloads *pl, int i)
{
  const cnms_payload *r = &pl->records[i];
  const float *kp = payload_at (pl, i);
  int j;

  printf (", \"keypoints\": [");
  for (j = 0; j < r->n_points; j++) {
    const float *p = kp + (size_t) r->point_dims * j;
    printf ("%s[", j ? ", " : "");
    print_num (p[0]);
    printf (", ");
    print_num (p[1]);
    printf (", ");
    print_num (p[2]);
    printf ("]");
  }
  printf ("]");
}

/* ", \"mask\": {...}" of kept record i: rectangle, offset, set pixels and
 * the FNV-1a 64 hash of its bytes. */
static void
print_mask (const cnms_payloads *pl, int i)
{
  const cnms_payload *m = &pl->records[i];
  const uint8_t *b = payload_at (pl, i);
  const size_t n = (size_t) m->width * (size_t) m->height;
  uint64_t h = 14695981039346656037ull;
  size_t j, set = 0;

  for (j = 0; j < n; j++) {
    set += b[j] != 0;
    h = (h ^ b[j]) * 1099511628211ull;
  }
  printf (", \"mask\": {\"x\": %d, \"y\": %d, \"w\": %d, \"h\": %d, "
      "\"offset\": %zu, \"set\": %zu, \"hash\": \"%016llx\"}", m->x, m->y,
      m->width, m->height, m->offset, set, (unsigned long long) h);
}

/* --masks-out: the masks' bytes of the n kept records, one after the
 * other. */
static void
write_masks (const char *path, const cnms_payloads *pl, int n)
{
  const cnms_payload *last = n > 0 ? &pl->records[n - 1] : NULL;
  int64_t dims[1];
  char err[512];

  dims[0] = last != NULL ? (int64_t) (last->offset
      + (size_t) last->width * last->height) : 0;
  if (cnms_npy_write (path, CNMS_NPY_U1, 1, dims, pl->data, err,
          sizeof err) != 0)
    die ("%s", err);
}

/* The JSON lines of n kept records and their payload pl. */
static void
print_records (const options *o, const cnms_layout_desc *desc,
    const cnms_det *dets, int n, const cnms_payloads *pl)
{
  static const char *const what[] = { "payload", "lane points",
    "keypoints", "masks"
  };
  int i;

  if (desc->head != CNMS_HEAD_NONE && n > 0
      && (pl->head != desc->head || pl->n != n))
    die ("%s: no %s for the %d records", o->tensor, what[desc->head], n);
  for (i = 0; i < n; i++) {
    if (desc->oriented) {
      print_oriented (&dets[i]);
      continue;
    }
    if (desc->head == CNMS_HEAD_LANE) {
      print_lane (&dets[i], pl, i);
      continue;
    }
    print_box (&dets[i]);
    if (desc->head == CNMS_HEAD_KEYPOINTS)
      print_keypoints (pl, i);
    else if (desc->head == CNMS_HEAD_MASK)
      print_mask (pl, i);
    printf ("}\n");
  }
}

/* decode of a [B, ...] tensor (B > 1; prototypes [B, M, Hp, Wp]): every
 * frame of the size given, each record's line naming its frame; a frame
 * that fails on its own is named on stderr, and the exit status is 1. */
static int
decode_batch (const options *o, cnms_ctx *ctx, const cnms_tensor *t,
    const cnms_tensor *pt)
{
  const cnms_frame_result *res;
  const cnms_layout_desc *desc;
  cnms_status st;
  int i, failed = 0;

  if (o->masks_out != NULL)
    die ("--masks-out takes a tensor of one frame");
  st = cnms_detect_batch (ctx, t, pt, NULL, (int) t->dims[0], o->layout,
      &o->p, &res);
  if (st != CNMS_OK)
    die ("%s: %s: %s", o->tensor, cnms_status_str (st),
        cnms_ctx_error (ctx));
  for (i = 0; i < (int) t->dims[0]; i++) {
    if (res[i].status != CNMS_OK) {
      fprintf (stderr, "cudanms-tool: %s: frame %d: %s: %s\n", o->tensor,
          i, cnms_status_str (res[i].status), res[i].error);
      failed = 1;
      continue;
    }
    desc = cnms_layout_info (res[i].report.shape.layout);
    if (desc == NULL)
      die ("%s: frame %d: no layout recognised", o->tensor, i);
    print_frame = i;
    print_records (o, desc, res[i].dets, res[i].n_dets, &res[i].payload);
  }
  print_frame = -1;
  return failed;
}

static int
run_decode (options *o)
{
  cnms_class_params *classes;
  cnms_npy a, pa;
  cnms_tensor t, pt;
  cnms_ctx *ctx;
  cnms_status st;
  cnms_payloads pl;
  const cnms_layout_desc *desc;
  const cnms_det *dets;
  int n_dets;

  if (o->tensor == NULL)
    die ("decode needs --tensor (see --help)");
  if (!o->have_model || !o->have_frame)
    die ("decode needs --model-size and --frame-size");
  if (o->layout == CNMS_LAYOUT_LANEATT) {
    if (!o->have_score || !o->have_lane_distance)
      die ("decode --layout laneatt needs --score-threshold and "
          "--lane-distance");
  } else if (!o->have_score || !o->have_iou) {
    die ("decode needs --score-threshold and --iou");
  }

  if ((o->protos != NULL || o->masks_out != NULL)
      != (o->layout == CNMS_LAYOUT_YOLOV8_SEG))
    die (o->protos == NULL && o->masks_out == NULL ?
        "decode --layout yolov8-seg needs --protos" :
        "--protos and --masks-out go with --layout yolov8-seg");
  if (o->layout == CNMS_LAYOUT_YOLOV8_SEG && o->protos == NULL)
    die ("decode --layout yolov8-seg needs --protos");
  if (o->p.keypoint_dims != 0 && o->layout != CNMS_LAYOUT_YOLOV8_POSE)
    die ("--keypoint-dims goes with --layout yolov8-pose");

  read_npy (o->tensor, &a);
  npy_tensor (o->tensor, &a, &t);

  classes = resolve_classes (o);
  ctx = open_ctx (o->backend);
  if (o->protos != NULL) {
    read_npy (o->protos, &pa);
    npy_tensor (o->protos, &pa, &pt);
  }
  if (t.n_dims >= 3 && t.dims[0] > 1) {
    const int failed = decode_batch (o, ctx, &t, o->protos != NULL ? &pt :
        NULL);

    finish_stdout ();
    cnms_ctx_free (ctx);
    if (o->protos != NULL)
      cnms_npy_clear (&pa);
    cnms_npy_clear (&a);
    free (classes);
    return failed;
  }
  st = cnms_detect (ctx, &t, o->protos != NULL ? &pt : NULL, o->layout,
      &o->p, &dets, &n_dets);
  if (st != CNMS_OK)
    die ("%s: %s: %s", o->tensor, cnms_status_str (st),
        cnms_ctx_error (ctx));
  desc = cnms_layout_info (cnms_ctx_report (ctx)->shape.layout);
  if (desc == NULL)
    die ("%s: no layout recognised", o->tensor);
  cnms_ctx_payload (ctx, &pl);
  print_records (o, desc, dets, n_dets, &pl);
  if (o->masks_out != NULL)
    write_masks (o->masks_out, &pl, n_dets);
  finish_stdout ();
  cnms_ctx_free (ctx);
  if (o->protos != NULL)
    cnms_npy_clear (&pa);
  cnms_npy_clear (&a);
  free (classes);
  return 0;
}

/* tiles: the frame's slices, their [B, ...] tensor decoded and merged
 * (cnms_detect_tiles). */
static int
run_tiles (options *o)
{
  cnms_class_params *classes;
  cnms_slice *slices;
  cnms_npy a;
  cnms_tensor t;
  cnms_ctx *ctx;
  cnms_status st;
  const cnms_det *dets;
  int n, n_dets, i;

  if (o->tensor == NULL || !o->have_slice)
    die ("tiles needs --tensor and --slice-size (see --help)");
  if (!o->have_model || !o->have_frame || !o->have_score || !o->have_iou)
    die ("tiles needs --model-size, --frame-size, --score-threshold and "
        "--iou");
  n = cnms_slice_grid (o->p.frame_width, o->p.frame_height, o->slice_w,
      o->slice_h, o->overlap, o->overlap, NULL, 0);
  if (n < 0)
    die ("--slice-size %dx%d of a %dx%d frame: no grid", o->slice_w,
        o->slice_h, o->p.frame_width, o->p.frame_height);
  slices = calloc ((size_t) n + 1, sizeof *slices);
  if (slices == NULL)
    die ("out of memory");
  cnms_slice_grid (o->p.frame_width, o->p.frame_height, o->slice_w,
      o->slice_h, o->overlap, o->overlap, slices, n);
  if (o->full_frame) {
    slices[n].x2 = o->p.frame_width;
    slices[n].y2 = o->p.frame_height;
    n++;
  }
  read_npy (o->tensor, &a);
  npy_tensor (o->tensor, &a, &t);
  if (t.n_dims < 3 || t.dims[0] != n)
    die ("%s: the tensor holds %lld frames, the grid has %d slices",
        o->tensor, t.n_dims >= 3 ? (long long) t.dims[0] : 1LL, n);
  classes = resolve_classes (o);
  ctx = open_ctx (o->backend);
  st = cnms_detect_tiles (ctx, &t, NULL, slices, n, o->p.frame_width,
      o->p.frame_height, o->layout, &o->p, &o->merge, &dets, &n_dets);
  if (st != CNMS_OK)
    die ("%s: %s: %s", o->tensor, cnms_status_str (st),
        cnms_ctx_error (ctx));
  for (i = 0; i < n_dets; i++) {
    print_box (&dets[i]);
    printf (", \"anchor\": %d}\n", (int) dets[i].anchor);
  }
  finish_stdout ();
  cnms_ctx_free (ctx);
  cnms_npy_clear (&a);
  free (classes);
  free (slices);
  return 0;
}

int
main (int argc, char **argv)
{
  options o;

  if (argc < 2)
    die ("no command given (see --help)");
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0) {
    print_usage ();
    return 0;
  }
  parse_args (argc, argv, &o);
  if (strcmp (argv[1], "nms") == 0)
    return run_nms (&o);
  if (strcmp (argv[1], "decode") == 0)
    return run_decode (&o);
  if (strcmp (argv[1], "tiles") == 0)
    return run_tiles (&o);
  die ("unknown command '%s' (expected nms, decode or tiles; see --help)",
      argv[1]);
}
