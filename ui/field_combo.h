// A picker whose items read "key — description" ("switch.isa.regulation —
// ISA wave regulation (2 values)", "hgx-h200-8 — 8x H200 SXM, ..."). Where the
// layout leaves it too narrow for its text (a laptop screen), the closed box
// shows the part that names the item (the description for an axis, the key
// for a preset) and then elides; the list and the tooltip keep the whole text.
// A preset's box shows its key always (setShortAlways), its description below.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QString>

namespace scin::ui {

class FieldCombo : public QComboBox {
 public:
  /// Which side of the " — " names an item when the box is narrow.
  enum class Keep { Description, Key };

  explicit FieldCombo(QWidget* parent = nullptr, Keep keep = Keep::Description);
  /// The text shown in the closed box at its present width.
  QString shownText() const;
  /// What the picker is for: the tooltip's second part.
  void setPurpose(const QString& purpose);
  /// Sets the tooltip from the current item; the box does so itself unless
  /// its signals were blocked when the item changed.
  void updateToolTip();
  /// Show the naming part even where the whole text fits (a preset, whose
  /// description is shown beside the box).
  void setShortAlways(bool on) { shortAlways_ = on; update(); }

 protected:
  void paintEvent(QPaintEvent* e) override;

 private:
  Keep keep_;
  bool shortAlways_ = false;
  QString purpose_;
};

/// A wrapped note of at most `lines` lines at its present width (a preset's
/// description under its box): a longer text ends in "…", and the tooltip
/// holds it whole.
class ClampedLabel : public QLabel {
 public:
  explicit ClampedLabel(int lines, QWidget* parent = nullptr);
  void setFullText(const QString& text);
  const QString& fullText() const { return full_; }

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  int lines_;
  QString full_;
  void clamp();
};

}  // namespace scin::ui
