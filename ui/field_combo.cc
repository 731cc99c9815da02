#include "ui/field_combo.h"

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

}  // namespace scin::ui
