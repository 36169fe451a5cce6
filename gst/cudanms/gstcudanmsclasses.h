/* cudanms: the per-class controls (properties class-score-thresholds,
 * class-ious, class-max-detections, classes, exclude-classes): their
 * strings parsed, class names resolved through the label file, and the
 * cnms_class_params a buffer uses. */
#ifndef __GST_CUDANMS_CLASSES_H__
#define __GST_CUDANMS_CLASSES_H__

#include <gst/gst.h>
#include "cudanms_static.h"
#include "gstcudanmslabels.h"

G_BEGIN_DECLS

typedef enum
{
  GST_CUDANMS_CLASS_THRESHOLDS = 0,     /* "id-or-label=score,..." */
  GST_CUDANMS_CLASS_IOUS,               /* "id-or-label=iou,..." */
  GST_CUDANMS_CLASS_MAX_DETECTIONS,     /* "id-or-label=count,..." */
  GST_CUDANMS_CLASS_KEEP,               /* "id-or-label,...": only these */
  GST_CUDANMS_CLASS_DROP,               /* "id-or-label,...": not these */
  GST_CUDANMS_N_CLASS_SPECS
} GstCudanmsClassSpec;

typedef struct
{
  gchar *spec[GST_CUDANMS_N_CLASS_SPECS];       /* as set; NULL: none (an
                                                 * empty or blank list) */
  /* the lists parsed (cudanms_static.h), their labels looked up once the
   * label file is read; n = 0: unset */
  cnms_class_list list[GST_CUDANMS_N_CLASS_SPECS];
  guint n;                      /* ids 0 .. n-1 named */
  /* the streaming thread's params (grow-only) */
  cnms_class_params *params;
  guint params_cap;
} GstCudanmsClasses;

void gst_cudanms_classes_init (GstCudanmsClasses * c);
void gst_cudanms_classes_clear (GstCudanmsClasses * c);

/* The property's name of a spec, for messages. */
const gchar *gst_cudanms_class_spec_name (GstCudanmsClassSpec which);

/* Parses value (NULL, "" or blanks clear it) for which, looking its
 * labels up in labels (NULL before start: labels are looked up at start).
 * On success stores it (TRUE); else *error says what is refused and c is
 * unchanged. The caller holds the object lock. */
gboolean gst_cudanms_classes_set (GstCudanmsClasses * c,
    GstCudanmsClassSpec which, const gchar * value,
    const GstCudanmsLabels * labels, GError ** error);

/* start(): looks up the stored specs' labels in labels; a spec naming
 * what the label file does not hold, or holds on two lines, or a class
 * twice, is dropped with *error saying which (the others stay). TRUE
 * when all resolved. The caller holds the lock. */
gboolean gst_cudanms_classes_resolve (GstCudanmsClasses * c,
    const GstCudanmsLabels * labels, GError ** error);

/* Fills p's per-class fields for one buffer from the rules and p's
 * frame-wide score threshold and IoU (c's params hold them until the next
 * call). The caller holds the lock. */
void gst_cudanms_classes_apply (GstCudanmsClasses * c, cnms_params * p);

G_END_DECLS
#endif /* __GST_CUDANMS_CLASSES_H__ */
