#include "ui/field_combo.h"

#include <algorithm>

#include <QResizeEvent>
#include <QStyleOptionComboBox>
#include <QStylePainter>

namespace scin::ui {

FieldCombo::FieldCombo(QWidget* parent, Keep keep) : QComboBox(parent), keep_(keep) {
  connect(this, &QComboBox::currentIndexChanged, this, [this] { updateToolTip(); });
}

void FieldCombo::setPurpose(const QString& purpose) {
  purpose_ = purpose;
  updateToolTip();
}

void FieldCombo::updateToolTip() {
  setToolTip(currentText().isEmpty() ? purpose_ : currentText() + QStringLiteral("\n\n") + purpose_);
}

QString FieldCombo::shownText() const {
  QStyleOptionComboBox opt;
  initStyleOption(&opt);
  const int room = style()->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, this).width();
  const QFontMetrics fm(font());
  QString t = currentText();
  if (!shortAlways_ && fm.horizontalAdvance(t) <= room) return t;
  const QString dash = QStringLiteral(" — ");
  if (const auto at = t.indexOf(dash); at >= 0) t = keep_ == Keep::Description ? t.mid(at + dash.size()) : t.left(at);
  return fm.elidedText(t, Qt::ElideRight, room);
}

void FieldCombo::paintEvent(QPaintEvent*) {
  QStylePainter p(this);
  QStyleOptionComboBox opt;
  initStyleOption(&opt);
  p.drawComplexControl(QStyle::CC_ComboBox, opt);
  opt.currentText = shownText();
  p.drawControl(QStyle::CE_ComboBoxLabel, opt);
}

ClampedLabel::ClampedLabel(int lines, QWidget* parent) : QLabel(parent), lines_(lines) { setWordWrap(true); }

void ClampedLabel::setFullText(const QString& text) {
  full_ = text;
  setToolTip(text);
  clamp();
}

void ClampedLabel::resizeEvent(QResizeEvent* e) {
  QLabel::resizeEvent(e);
  clamp();
}

// The longest head of the text (cut after a word, then "…") that wraps into
// `lines_` lines at the label's width, as the label wraps it.
void ClampedLabel::clamp() {
  const int w = std::max(1, contentsRect().width());
  const QFontMetrics fm(font());
  const auto lines_of = [&](const QString& t) {
    return fm.boundingRect(QRect(0, 0, w, 1 << 20), Qt::TextWordWrap, t).height() / std::max(1, fm.lineSpacing());
  };
  QString shown = full_;
  if (lines_of(full_) > lines_) {
    int lo = 0, hi = static_cast<int>(full_.size());  // the longest head that fits
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (lines_of(full_.left(mid) + QChar(0x2026)) <= lines_) lo = mid;
      else hi = mid - 1;
    }
    QString head = full_.left(lo);
    if (const auto space = head.lastIndexOf(QLatin1Char(' ')); space > 0) head = head.left(space);
    shown = head + QChar(0x2026);
  }
  if (text() != shown) setText(shown);
}

}  // namespace scin::ui
