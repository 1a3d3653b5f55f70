"""pycocotools' `COCOeval.summarize()` table, as one eval result.

Most detection trainers (Detectron2, MMDetection, YOLOX, DETR, PaddleDetection, torchvision's
detection references, MLPerf's Mask R-CNN) end each evaluation with it:

    Evaluate annotation type *bbox*
    ...
     Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.174
     Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.351
     ...
     Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets=100 ] = 0.392

Boxes and masks print 12 rows, keypoints 10; both end with the large-area recall, where the
table's result is given.  A row is named as papers name it (`AP`, `AP50`, `APs`, `AR100`,
`ARl`), behind the annotation type when the table says it (`bbox/AP`)."""
from __future__ import annotations

from .base import Pattern, num

ROW = Pattern(r"Average (?:Precision|Recall) {1,8}+\((AP|AR)\) @\[ IoU=([\d.:]{1,12}+) *+\| area= *+(\w{1,12}+)"
              r" *+\| maxDets= *+(\d{1,6}+) *+\] = (-?[\d.]{1,20}+)")
ANNOTATION_TYPE = Pattern(r"Evaluate annotation type \*(\w{1,20}+)\*")
_IOUS = {"0.50:0.95": "", "0.50": "50", "0.75": "75"}


def row_name(kind: str, iou: str, area: str, max_dets: str) -> str:
    """`AP`, `AP50`, `AP75`, `APs`/`APm`/`APl`, `AR1`/`AR10`/`AR100`, `ARs`/`ARm`/`ARl`."""
    name = kind + _IOUS.get(iou, iou)
    if area != "all":
        return name + area[:1]
    if kind == "AR" and iou == "0.50:0.95":
        return name + max_dets
    return name


class CocoSummary:
    """The rows of each rank's table so far; `read` gives the table's metrics at its last row."""

    def __init__(self) -> None:
        self.rows: dict = {}        # rank -> {name: value}
        self.types: dict = {}       # rank -> the annotation type of the table to come

    def read(self, line: str, rank) -> dict | None:
        """The table's metrics at its last row; None at any other line."""
        if "annotation type" in line:
            m = ANNOTATION_TYPE.search(line)
            if m:
                self.types[rank] = m.group(1)
                self.rows.pop(rank, None)
            return None
        m = ROW.search(line)
        if m is None:
            return None
        kind, iou, area, max_dets, value = m.groups()
        rows = self.rows.setdefault(rank, {})
        rows[row_name(kind, iou, area, max_dets)] = num(value)
        if kind != "AR" or area != "large":
            return None
        del self.rows[rank]
        prefix = self.types.pop(rank, None)
        return {f"{prefix}/{k}" if prefix else k: v for k, v in rows.items()}
