#include "ui/points_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace scin::ui {

std::shared_ptr<const PointsModel::Content> PointsModel::build(std::shared_ptr<const analysis::AnalysisTable> table,
                                                               std::shared_ptr<const analysis::PlotData> plot) {
  auto c = std::make_shared<Content>();
  c->table = std::move(table);
  c->plot = std::move(plot);
  using Kind = Content::Kind;
  if (c->table && c->plot && !c->plot->empty()) {
    const auto& t = *c->table;
    auto unit = [](const analysis::Column& col) {
      return col.unit.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(col.bytes ? "bytes" : col.unit));
    };
    c->cols.push_back({Kind::Index, 0, tr("point")});
    c->cols.push_back({Kind::Series, 0, tr("series")});
    if (!c->plot->facets.front().value.empty()) c->cols.push_back({Kind::Facet, 0, tr("panel")});
    for (std::size_t a = 0; a < t.axes.size(); ++a)
      c->cols.push_back({Kind::Axis, a, QString::fromStdString(t.axes[a].key) + unit(t.axes[a])});
    c->cols.push_back({Kind::Y, 0, QString::fromStdString(c->plot->y.key) + unit(c->plot->y)});
    for (std::size_t m = 0; m < t.metrics.size(); ++m)
      if (t.metrics[m].derived == analysis::Derived::None && t.metrics[m].key != c->plot->y.key)
        c->cols.push_back({Kind::Metric, m, QString::fromStdString(t.metrics[m].key) + unit(t.metrics[m])});
    std::vector<Content::Ref> refs;
    for (const auto& f : c->plot->facets)
      for (const auto& s : f.series)
        for (const auto& pt : s.points) refs.push_back({&f, &s, &pt});
    // Point-index order (the default sort), stable.
    std::vector<std::uint32_t> idx(refs.size());
    std::iota(idx.begin(), idx.end(), 0u);
    std::vector<std::uint64_t> pi(refs.size());
    for (std::size_t i = 0; i < refs.size(); ++i) pi[i] = t.rows[refs[i].point->row].point_index;
    std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) { return pi[a] < pi[b]; });
    c->refs.reserve(refs.size());
    c->pointIndex.reserve(refs.size());
    for (std::uint32_t i : idx) {
      c->refs.push_back(refs[i]);
      c->pointIndex.push_back(pi[i]);
    }
  }
  return c;
}

void PointsModel::setPlot(std::shared_ptr<const analysis::AnalysisTable> table,
                          std::shared_ptr<const analysis::PlotData> plot) {
  setContent(build(std::move(table), std::move(plot)));
}

void PointsModel::setContent(std::shared_ptr<const Content> content) {
  beginResetModel();
  content_ = std::move(content);
  ++sortGeneration_;
  sortPending_ = false;
  order_.resize(content_ ? content_->refs.size() : 0);
  std::iota(order_.begin(), order_.end(), 0u);  // point-index order until sorted
  const bool here = sortHere();
  if (here && content_) order_ = orderFor(*content_, sortColumn_, sortOrder_);
  endResetModel();
  if (!here) sortOnWorker();
}

void PointsModel::sort(int column, Qt::SortOrder order) {
  sortColumn_ = column;
  sortOrder_ = order;
  ++sortGeneration_;
  sortPending_ = false;
  if (!content_ || content_->refs.empty()) return;
  if (sortHere()) install(orderFor(*content_, sortColumn_, sortOrder_));
  else sortOnWorker();
}

bool PointsModel::sortHere() const {
  if (!content_ || content_->refs.size() <= kSortHereRows) return true;
  const int ncols = static_cast<int>(content_->cols.size());
  return sortColumn_ < 0 || sortColumn_ >= ncols ||
         content_->cols[static_cast<std::size_t>(sortColumn_)].kind == Content::Kind::Index;  // a reversal
}

void PointsModel::sortOnWorker() {
  sortPending_ = true;
  const std::uint64_t generation = sortGeneration_;
  std::shared_ptr<const Content> content = content_;
  auto* watcher = new QFutureWatcher<std::vector<std::uint32_t>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, content] {
    watcher->deleteLater();
    if (generation != sortGeneration_ || content != content_) return;  // a newer sort or content took over
    sortPending_ = false;
    install(watcher->result());
    Q_EMIT sortFinished();
  });
  watcher->setFuture(QtConcurrent::run(
      [content, column = sortColumn_, order = sortOrder_] { return orderFor(*content, column, order); }));
}

void PointsModel::install(std::vector<std::uint32_t> order) {
  if (order.size() != order_.size()) return;
  Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
  const std::vector<std::uint32_t> before = std::move(order_);
  order_ = std::move(order);
  std::vector<int> rowOf(order_.size());
  for (std::size_t r = 0; r < order_.size(); ++r) rowOf[order_[r]] = static_cast<int>(r);
  const QModelIndexList from = persistentIndexList();
  QModelIndexList to;
  to.reserve(from.size());
  for (const QModelIndex& i : from) to << index(rowOf[before[static_cast<std::size_t>(i.row())]], i.column());
  changePersistentIndexList(from, to);
  Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

std::vector<std::uint32_t> PointsModel::orderFor(const Content& c, int column, Qt::SortOrder sortOrder) {
  std::vector<std::uint32_t> order(c.refs.size());
  std::iota(order.begin(), order.end(), 0u);
  if (order.empty()) return order;
  const int ncols = static_cast<int>(c.cols.size());
  const bool down = sortOrder == Qt::DescendingOrder;
  if (column < 0 || column >= ncols || c.cols[static_cast<std::size_t>(column)].kind == Content::Kind::Index) {
    // The references are in point-index order already.
    if (down && column >= 0 && column < ncols) std::reverse(order.begin(), order.end());
    return order;
  }
  // As numbers (Qt::UserRole) where the column holds numbers, else as text; equal keys keep point order.
  const std::size_t n = order.size();
  const QVariant probe = cellOf(c, 0, column, Qt::UserRole);
  if (probe.typeId() == QMetaType::QString) {
    std::vector<QString> key(n);
    for (std::size_t i = 0; i < n; ++i) key[i] = cellOf(c, i, column, Qt::UserRole).toString();
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return down ? key[b] < key[a] : key[a] < key[b];
    });
  } else {
    std::vector<double> key(n);
    for (std::size_t i = 0; i < n; ++i) key[i] = cellOf(c, i, column, Qt::UserRole).toDouble();
    auto less = [](double a, double b) { return std::isnan(a) ? false : std::isnan(b) ? true : a < b; };  // NaN last
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return down ? less(key[b], key[a]) : less(key[a], key[b]);
    });
  }
  return order;
}

int PointsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(order_.size()); }
int PointsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || !content_ ? 0 : static_cast<int>(content_->cols.size());
}

QVariant PointsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (o == Qt::Vertical) return section + 1;
  return content_ && section >= 0 && section < static_cast<int>(content_->cols.size())
             ? QVariant(content_->cols[static_cast<std::size_t>(section)].title)
             : QVariant();
}

QVariant PointsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !content_ || index.row() >= static_cast<int>(order_.size())) return {};
  return cell(ref(index.row()), index.column(), role);
}

QVariant PointsModel::cellOf(const Content& content, std::size_t refIndex, int column, int role) {
  if ((role != Qt::DisplayRole && role != Qt::UserRole && role != Qt::TextAlignmentRole) || column < 0 ||
      column >= static_cast<int>(content.cols.size()))
    return {};
  const Content::Ref& r = content.refs[refIndex];
  const Content::Col& c = content.cols[static_cast<std::size_t>(column)];
  const analysis::AnalysisTable& t = *content.table;
  const analysis::Row& row = t.rows[r.point->row];
  QVariant number, text;
  switch (c.kind) {
    case Content::Kind::Index: number = static_cast<qulonglong>(row.point_index); break;
    case Content::Kind::Series: text = QString::fromStdString(r.series->label); break;
    case Content::Kind::Facet: text = QString::fromStdString(r.facet->value); break;
    case Content::Kind::Axis:
      if (t.axes[c.i].numeric) number = row.axes[c.i].number;
      else text = QString::fromStdString(row.axes[c.i].text);
      break;
    case Content::Kind::Y: number = r.point->y; break;
    case Content::Kind::Metric: number = row.metrics[c.i]; break;
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
  if (!content_ || row < 0 || column < 0 || row >= static_cast<int>(order_.size()) ||
      column >= static_cast<int>(content_->cols.size()) ||
      content_->cols[static_cast<std::size_t>(column)].kind != Content::Kind::Index)
    return std::nullopt;
  return content_->pointIndex[ref(row)];
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
