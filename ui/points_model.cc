#include "ui/points_model.h"

#include <map>

namespace scin::ui {

void PointsModel::setPlot(std::shared_ptr<const analysis::AnalysisTable> table,
                          std::shared_ptr<const analysis::PlotData> plot) {
  beginResetModel();
  table_ = std::move(table);
  plot_ = std::move(plot);
  refs_.clear();
  pointIndex_.clear();
  cols_.clear();
  if (table_ && plot_ && !plot_->empty()) {
    auto unit = [](const analysis::Column& c) {
      return c.unit.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(c.bytes ? "bytes" : c.unit));
    };
    cols_.push_back({Kind::Index, 0, tr("point")});
    cols_.push_back({Kind::Series, 0, tr("series")});
    if (!plot_->facets.front().value.empty()) cols_.push_back({Kind::Facet, 0, tr("panel")});
    for (std::size_t a = 0; a < table_->axes.size(); ++a)
      cols_.push_back({Kind::Axis, a, QString::fromStdString(table_->axes[a].key) + unit(table_->axes[a])});
    cols_.push_back({Kind::Y, 0, QString::fromStdString(plot_->y.key) + unit(plot_->y)});
    for (std::size_t m = 0; m < table_->metrics.size(); ++m)
      if (table_->metrics[m].derived == analysis::Derived::None && table_->metrics[m].key != plot_->y.key)
        cols_.push_back({Kind::Metric, m, QString::fromStdString(table_->metrics[m].key) + unit(table_->metrics[m])});
    for (const auto& f : plot_->facets)
      for (const auto& s : f.series)
        for (const auto& pt : s.points) refs_.push_back({&f, &s, &pt});
    pointIndex_.reserve(refs_.size());
    for (const Ref& r : refs_) pointIndex_.push_back(table_->rows[r.point->row].point_index);
  }
  endResetModel();
}

int PointsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(refs_.size()); }
int PointsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(cols_.size()); }

QVariant PointsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (o == Qt::Vertical) return section + 1;
  return section >= 0 && section < static_cast<int>(cols_.size()) ? QVariant(cols_[static_cast<std::size_t>(section)].title) : QVariant();
}

QVariant PointsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::UserRole && role != Qt::TextAlignmentRole)) return {};
  const Ref& r = refs_[static_cast<std::size_t>(index.row())];
  const Col& c = cols_[static_cast<std::size_t>(index.column())];
  const analysis::Row& row = table_->rows[r.point->row];
  QVariant number, text;
  switch (c.kind) {
    case Kind::Index: number = static_cast<qulonglong>(row.point_index); break;
    case Kind::Series: text = QString::fromStdString(r.series->label); break;
    case Kind::Facet: text = QString::fromStdString(r.facet->value); break;
    case Kind::Axis:
      if (table_->axes[c.i].numeric) number = row.axes[c.i].number;
      else text = QString::fromStdString(row.axes[c.i].text);
      break;
    case Kind::Y: number = r.point->y; break;
    case Kind::Metric: number = row.metrics[c.i]; break;
  }
  if (role == Qt::TextAlignmentRole)
    return number.isValid() ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant(int(Qt::AlignLeft | Qt::AlignVCenter));
  if (number.isValid()) {
    if (role == Qt::UserRole) return number;  // sorts as a number
    return number.typeId() == QMetaType::Double ? QString::number(number.toDouble(), 'g', 10) : number.toString();
  }
  return text;
}

std::optional<std::uint64_t> PointsModel::pointIndex(int row, int column) const {
  if (row < 0 || column < 0 || row >= static_cast<int>(refs_.size()) || column >= static_cast<int>(cols_.size()) ||
      cols_[static_cast<std::size_t>(column)].kind != Kind::Index)
    return std::nullopt;
  return pointIndex_[static_cast<std::size_t>(row)];
}

void PointsProxy::setSourceModel(QAbstractItemModel* model) {
  points_ = dynamic_cast<const PointsModel*>(model);
  QSortFilterProxyModel::setSourceModel(model);
}

bool PointsProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  if (points_ && sortRole() == Qt::UserRole) {
    const auto l = points_->pointIndex(left.row(), left.column()), r = points_->pointIndex(right.row(), right.column());
    if (l && r) return *l < *r;
  }
  return QSortFilterProxyModel::lessThan(left, right);
}

QString PointsModel::copyText(const QModelIndexList& indexes) {
  if (indexes.isEmpty()) return {};
  std::map<int, std::map<int, QString>> cells;
  std::map<int, QString> head;
  for (const QModelIndex& i : indexes) {
    cells[i.row()][i.column()] = i.data(Qt::DisplayRole).toString();
    head[i.column()] = i.model()->headerData(i.column(), Qt::Horizontal, Qt::DisplayRole).toString();
  }
  QStringList lines, h;
  for (const auto& [col, t] : head) h << t;
  lines << h.join(QLatin1Char('\t'));
  for (const auto& [row, byCol] : cells) {
    QStringList out;
    for (const auto& [col, t] : head) {
      auto it = byCol.find(col);
      out << (it == byCol.end() ? QString() : it->second);
    }
    lines << out.join(QLatin1Char('\t'));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace scin::ui
