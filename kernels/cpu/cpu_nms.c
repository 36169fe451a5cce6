/* CPU exact greedy NMS. Box j is dropped when an earlier KEPT box of its
 * class (any class when agnostic) overlaps it with IoU > iou. Testing j
 * against the kept boxes only, and for class-aware NMS only against the
 * kept boxes of its own class, gives exactly the greedy result with far
 * fewer IoUs than the full pairwise walk. */
#include "cpu_priv.h"

static inline int
overlaps_kept (const float *kbox, const float *karea, int from, int to,
    const float *b, float area, float iou)
{
  int i;

  for (i = from; i < to; i++) {
    if (cnms_iou (kbox + 4 * (size_t) i, karea[i], b, area) > iou)
      return 1;
  }
  return 0;
}

int
cnms_cpu_greedy (const float *boxes, const float *areas,
    const int32_t *classes, int n_classes, int k, float iou, int max_keep,
    const cnms_greedy_ws *ws, int32_t *kept)
{
  int j, i, n_kept = 0;
  int suppressed;

  if (classes != NULL) {
    for (i = 0; i < n_classes; i++)
      ws->head[i] = -1;
  }
  for (j = 0; j < k && n_kept < max_keep; j++) {
    const float *b = boxes + 4 * (size_t) j;
    float area = areas[j];

    if (classes == NULL) {
      suppressed = overlaps_kept (ws->kbox, ws->karea, 0, n_kept, b, area,
          iou);
    } else {
      suppressed = 0;
      for (i = ws->head[classes[j]]; i >= 0; i = ws->klink[i]) {
        if (cnms_iou (ws->kbox + 4 * (size_t) i, ws->karea[i], b,
                area) > iou) {
          suppressed = 1;
          break;
        }
      }
    }
    if (suppressed)
      continue;

    ws->kbox[4 * (size_t) n_kept + 0] = b[0];
    ws->kbox[4 * (size_t) n_kept + 1] = b[1];
    ws->kbox[4 * (size_t) n_kept + 2] = b[2];
    ws->kbox[4 * (size_t) n_kept + 3] = b[3];
    ws->karea[n_kept] = area;
    if (classes != NULL) {
      ws->klink[n_kept] = ws->head[classes[j]];
      ws->head[classes[j]] = n_kept;
    }
    kept[n_kept++] = j;
  }
  return n_kept;
}

static inline uint32_t
hash_class (int32_t c)
{
  /* Fibonacci hashing: consecutive ids spread over the table */
  return (uint32_t) c * 2654435769u;
}

int
cnms_cpu_dense_classes (const int32_t *classes, const uint32_t *order,
    int n, int32_t *dense, int32_t *table_keys, int32_t *table_vals,
    uint32_t table_mask)
{
  int i, n_dense = 0;
  uint32_t s;

  for (s = 0; s <= table_mask; s++)
    table_vals[s] = -1;
  for (i = 0; i < n; i++) {
    int32_t c = classes[order[i]];
    /* top bits of the product are the well-mixed ones */
    s = (hash_class (c) >> 7) & table_mask;
    while (table_vals[s] >= 0 && table_keys[s] != c)
      s = (s + 1) & table_mask;
    if (table_vals[s] < 0) {
      table_keys[s] = c;
      table_vals[s] = n_dense++;
    }
    dense[i] = table_vals[s];
  }
  return n_dense;
}
