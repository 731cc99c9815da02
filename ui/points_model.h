// The points behind an analysis plot as a Qt table model: one row per plotted
// point (point index, series, panel, every axis value, the y value, every
// stored metric). Rows are read lazily from the shared table, so a run of any
// size opens at once; sorting goes through a QSortFilterProxyModel on the
// numbers (Qt::UserRole), copying through copyText().
#pragma once

#include <memory>

#include <QAbstractTableModel>
#include <QModelIndexList>

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
  std::vector<Col> cols_;
};

}  // namespace scin::ui
