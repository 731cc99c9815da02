// The points behind an analysis plot as a Qt table model: one row per plotted
// point (point index, series, panel, every axis value, the y value, every
// stored metric). Rows are read lazily from the shared table, so a run of any
// size opens at once; sorting goes through a QSortFilterProxyModel on the
// numbers (Qt::UserRole), copying through copyText().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <QAbstractTableModel>
#include <QModelIndexList>
#include <QSortFilterProxyModel>

#include "analysis/plot.h"

namespace scin::ui {

class PointsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  void setPlot(std::shared_ptr<const analysis::AnalysisTable> table, std::shared_ptr<const analysis::PlotData> plot);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  /// The cells of `indexes` (any model over this one) as tab-separated text with a header line.
  static QString copyText(const QModelIndexList& indexes);
  /// The stored point index of `row` when `column` is the point column (what
  /// data(Qt::UserRole) holds there), else nullopt.
  std::optional<std::uint64_t> pointIndex(int row, int column) const;

 private:
  struct Ref {
    const analysis::Facet* facet;
    const analysis::Series* series;
    const analysis::SeriesPoint* point;
  };
  enum class Kind { Index, Series, Facet, Axis, Y, Metric };
  struct Col {
    Kind kind;
    std::size_t i = 0;
    QString title;
  };
  std::shared_ptr<const analysis::AnalysisTable> table_;
  std::shared_ptr<const analysis::PlotData> plot_;
  std::vector<Ref> refs_;
  std::vector<std::uint64_t> pointIndex_;  // per ref: its row's point index (sorting reads it contiguously)
  std::vector<Col> cols_;
};

/// The proxy the points table sorts through: the point column (the default
/// sort, redone on every new plot) compares the indices directly instead of
/// through QVariants, so 10^5 points re-sort in milliseconds on the GUI thread;
/// the other columns as QSortFilterProxyModel does.
class PointsProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void setSourceModel(QAbstractItemModel* model) override;

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  const PointsModel* points_ = nullptr;  // the source model when it is a PointsModel
};

}  // namespace scin::ui
